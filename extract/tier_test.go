//go:build !reliability

package extract_test

// eraseRounds is how often make test races an erasure against extraction; make
// reliability (-tags reliability) runs it a hundred times.
const eraseRounds = 5
