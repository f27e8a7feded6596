//go:build !reliability

package handlers_test

import "time"

// raceRounds is how often make test races a move against a team's dissolution and an
// agent's erasure; make reliability (-tags reliability) runs 100.
const raceRounds = 20

// httpMatrixSkips are the matrix's principals whose cells make test leaves to the
// service tier (which runs every principal on the same store through the same service
// calls): each repeats a kind another principal runs over HTTP (globex_alice,
// assert_x_writer, assert_confined and assert_foreign). make reliability runs them all
// over HTTP too.
var httpMatrixSkips = map[string]bool{"globex_root": true, "globex_plugin": true, "assert_y_reader": true,
	"assert_unset": true, "assert_ghost": true}

// wholeReadsFor is how long make test reads a webhook's deliveries while they are being
// finished over and over (TestWebhook_DeliveriesReadWhole).
const wholeReadsFor = 3 * time.Second
