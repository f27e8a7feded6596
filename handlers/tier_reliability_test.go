//go:build reliability

package handlers_test

// raceRounds under make reliability: the hundred rounds security finding 3 asks for.
const raceRounds = 100

// httpMatrixSkips: make reliability runs every principal of the matrix over HTTP.
var httpMatrixSkips = map[string]bool{}
