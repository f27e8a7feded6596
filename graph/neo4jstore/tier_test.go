//go:build !reliability

package neo4jstore_test

// raceRounds is how often make test races webhook registrations against their
// limits; make reliability (-tags reliability) runs 100.
const raceRounds = 20
