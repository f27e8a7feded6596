//go:build !reliability

package handlers_test

// raceRounds is how often make test races a move against a team's dissolution and an
// agent's erasure; make reliability (-tags reliability) runs 100.
const raceRounds = 20
