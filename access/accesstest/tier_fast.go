//go:build !reliability

package accesstest

// httpSkips are the principals whose cells make test decides in the service tier
// alone: each repeats a kind another principal runs over HTTP (globex_alice,
// assert_x_writer, assert_confined and assert_foreign). make reliability runs them all
// over HTTP too.
var httpSkips = map[string]bool{"globex_root": true, "globex_plugin": true, "assert_y_reader": true,
	"assert_unset": true, "assert_ghost": true}

// ServiceRepeatsHTTP says whether the service tier also decides the cells the HTTP
// tier decides (OverHTTP). make test decides each cell once, in the outermost tier that
// has it: an HTTP cell goes through the same service call on the same store. make
// reliability decides those cells in both tiers.
const ServiceRepeatsHTTP = false
