//go:build !reliability

package accesstest

// httpSkips are the principals whose cells make test decides in the service tier
// alone. The eight it runs over HTTP (owner_a, admin, confined, globex_alice,
// assert_x_writer, nonmember, assert_confined, promoter) between them meet every
// outcome of every HTTP operation of the matrix (106 operation-outcome pairs,
// TestOverHTTP_MeetsEveryOutcome), with trusted, admin, confined and asserting host
// keys and a second organization's; the others add principals, not routes or answers,
// and their cells go through the same service calls. make reliability runs them all
// over HTTP too.
var httpSkips = map[string]bool{"owner_b": true, "share_a": true, "x_reader": true, "x_writer": true,
	"share_promoter": true, "lapsed_a": true, "globex_root": true, "globex_plugin": true, "assert_y_reader": true,
	"assert_unset": true, "assert_ghost": true, "assert_foreign": true, "delegate_a": true, "lapsed_delegate_a": true}

// ServiceRepeatsHTTP says whether the service tier also decides the cells the HTTP
// tier decides (OverHTTP). make test decides each cell once, in the outermost tier that
// has it: an HTTP cell goes through the same service call on the same store. make
// reliability decides those cells in both tiers.
const ServiceRepeatsHTTP = false
