//go:build !reliability

package handlers_test

// raceRounds is how often make test races a move against a team's dissolution and an
// agent's erasure; make reliability (-tags reliability) runs 100.
const raceRounds = 20

// probeSkips are the principals TestProbe_NoLeaks builds its world with but does not
// sweep with under make test, each a kind another one sweeps: dave (a team's reader,
// as carol is its writer), app1-gina (a confined key's, as app1-frank), and globex-bob,
// globex-carol and globex-dave (the second organization's member, writer and reader, as
// bob and carol, and globex-alice as an owner there). make reliability sweeps with all
// fourteen.
var probeSkips = map[string]bool{"dave": true, "app1-gina": true, "globex-bob": true, "globex-carol": true, "globex-dave": true}

// wholeFinishes is how many finishes of a webhook's deliveries make test reads them
// during (TestWebhook_DeliveriesReadWhole).
const wholeFinishes = 50
