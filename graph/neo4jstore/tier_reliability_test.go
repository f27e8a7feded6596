//go:build reliability

package neo4jstore_test

// raceRounds under make reliability.
const raceRounds = 100
