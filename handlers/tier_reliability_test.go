//go:build reliability

package handlers_test

// raceRounds under make reliability: the hundred rounds security finding 3 asks for.
const raceRounds = 100
