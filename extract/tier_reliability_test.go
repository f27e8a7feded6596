//go:build reliability

package extract_test

// eraseRounds under make reliability: the hundred runs security finding 1 asks for.
const eraseRounds = 100
