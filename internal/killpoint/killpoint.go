// Package killpoint is where a kill test stops a journaled write between two renames.
package killpoint

// AfterRename, when set, is called after the n-th rename (1-based) of a
// journaled commit. Only kill tests set it (internal/testkit/killtest),
// in their child process: it lives below the library so that the tests
// of the library and of the features that commit through it can reach it.
var AfterRename func(n int)
