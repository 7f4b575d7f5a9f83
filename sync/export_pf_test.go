package sync

import "github.com/git-ctx/git-ctx/cache"

// The two halves of Pull and what the first hands the second, for the
// external tests of pullcache_test.go (they import workspacetest, which an
// in-package test of sync may not).
var (
	PfFetchAndMerge = fetchAndMerge
	PfRecordPull    = recordPull
)

// PfVerified is what a pull carries to the cache.
func PfVerified(r *PullResult) map[string]cache.Preverified { return r.verified }

// PfCacheAhead reports whether the pull's cache was built while it
// verified and put in place (cache.Mirror.BuildAhead).
func PfCacheAhead(r *PullResult) bool { return r.cacheAhead }
