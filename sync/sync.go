package sync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/gitname"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// PullResult says what a pull did.
type PullResult struct {
	Remote   string
	Fetched  string // remote tip ("" when the remote has no memory branch)
	Before   string // local tip before ("" when there was none)
	After    string
	UpToDate bool
	Added    int
	NewKeys  []string
	Devices  []DeviceResult
	Rejected []Rejection
	Forks    int
	// Packages counts the published package files verified and merged.
	Packages int
	// PackageConflicts counts package files rejected because the remote
	// rewrote a package it had published with this branch's bytes.
	PackageConflicts int
	// Superseded lists this branch's unpushed packages withdrawn because
	// the remote had already published another file under the same
	// name@version (the remote's copy was merged in their place).
	Superseded []Superseded
	// SharedKeys lists keys this pull accepted that are also published
	// under another device id (reported once: by the pull that accepts
	// them). Such devices are merged; `git ctx devices` keeps showing them.
	SharedKeys []SharedKey
	Durations  Timings

	verified map[string]cache.Preverified // checkpoints this pull verified and merged
	// cacheAhead: the cache was built while the pull verified, and is in
	// place (cache.Mirror.BuildAhead).
	cacheAhead bool
}

// MaxJSONRejections bounds the rejections a pull's JSON lists (the first
// ones, in the order of Rejected; internal/output builds that JSON);
// rejected_total and rejected_by_reason count them all, and the quarantine
// ('git ctx log --unverified --json') holds them all.
const MaxJSONRejections = 1000

// maxSummaryPaths bounds the rejected paths Summary lists one by one.
const maxSummaryPaths = 5

// Timings splits a pull's wall time (milliseconds).
type Timings struct {
	Fetch  float64
	Verify float64
	Merge  float64
	Cache  float64
}

// Err returns the error a pull's outcome stands for: ErrFork when a chain
// forked, ErrUnverified when anything was rejected, else nil.
func (r *PullResult) Err() error {
	switch {
	case r.Forks > 0:
		return fmt.Errorf("%w: %d fork(s); nothing past a fork was merged (see 'git ctx log --unverified')", ErrFork, r.Forks)
	case r.PackageConflicts > 0:
		return fmt.Errorf("%w: the remote rewrote %d package(s) it had published; not merged, this branch keeps the originals (see 'git ctx log --unverified')", ErrPackageConflict, r.PackageConflicts)
	case len(r.Superseded) == 1:
		return fmt.Errorf("%w: %s", ErrPackageConflict, r.Superseded[0].Detail)
	case len(r.Superseded) > 1:
		return fmt.Errorf("%w: %d of this branch's unpushed packages were withdrawn: the remote already published others under their names and versions; "+
			"the remote's copies are kept — publish yours under new versions (see the lines above, or 'superseded' in --json)", ErrPackageConflict, len(r.Superseded))
	case len(r.Rejected) > 0:
		return fmt.Errorf("%w: %d record(s) rejected and quarantined (see 'git ctx log --unverified')", ErrUnverified, len(r.Rejected))
	}
	return nil
}

// maxMergeAttempts bounds retries when a local append races the merge.
const maxMergeAttempts = 10

// Pull fetches the remote's memory branch, verifies everything new and
// merges what verified into the local branch (creating it if needed).
func Pull(ctx context.Context, m *workspace.Workspace, remote string, opt Options) (*PullResult, error) {
	res, err := fetchAndMerge(ctx, m, remote, opt)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	if err := recordPull(ctx, m, res); err != nil {
		return nil, err
	}
	res.Durations.Cache += ms(time.Since(t))
	return res, nil
}

// fetchAndMerge is Pull without touching the cache.
func fetchAndMerge(ctx context.Context, m *workspace.Workspace, remote string, opt Options) (*PullResult, error) {
	st := m.Store
	pol, res, err := newPull(ctx, m, remote)
	if err != nil {
		return nil, err
	}
	// What the remote was before this fetch: a package it held then was
	// published there, whatever the fetched tip says now.
	prev, err := st.ResolveRef(TrackingRef(remote))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", TrackingRef(remote), err)
	}
	t0 := time.Now()
	tipR, err := Fetch(ctx, st, remote, opt)
	if err != nil {
		return nil, err
	}
	res.Durations.Fetch = ms(time.Since(t0))
	if tipR.IsZero() {
		res.UpToDate = true
		return res, nil
	}
	return res, mergeFetched(ctx, m, remote, prev, tipR, pol, res)
}

// AdoptFetched starts a clone without a memory branch from its memory
// remote's branch fetched earlier (refs/remotes/REMOTE/ghyll/memory, brought
// by `git fetch` or a mirror clone): the pull's verified merge of that
// tracking ref, without fetching, so that what does not verify never becomes
// this clone's branch; rejections go to the cache's quarantine as a pull's
// do. It returns nil, nil when there is nothing to adopt: this clone has a
// branch already, or REMOTE has no fetched ghyll/memory.
func AdoptFetched(ctx context.Context, m *workspace.Workspace, remote string) (*PullResult, error) {
	st := m.Store
	tipL, err := st.Tip()
	if err != nil || !tipL.IsZero() {
		return nil, err
	}
	tipR, err := st.ResolveRef(TrackingRef(remote))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", TrackingRef(remote), err)
	}
	if tipR.IsZero() {
		return nil, nil
	}
	pol, res, err := newPull(ctx, m, remote)
	if err != nil {
		return nil, err
	}
	if err := mergeFetched(ctx, m, remote, plumbing.ZeroHash, tipR, pol, res); err != nil {
		return nil, err
	}
	if err := recordPull(ctx, m, res); err != nil {
		return nil, err
	}
	return res, nil
}

// newPull reads the trust policy and starts an empty result.
func newPull(ctx context.Context, m *workspace.Workspace, remote string) (Policy, *PullResult, error) {
	pol, err := LoadPolicy(m.Repo)
	if err != nil {
		return pol, nil, err
	}
	if pol.RepoID, err = m.UnfixedRepoID(ctx); err != nil && !errors.Is(err, gitrepo.ErrNoRepoID) {
		return pol, nil, err
	}
	return pol, &PullResult{Remote: remote, NewKeys: []string{}, Devices: []DeviceResult{}, Rejected: []Rejection{}, Superseded: []Superseded{}, SharedKeys: []SharedKey{}}, nil
}

// mergeFetched merges the fetched tip tipR into the branch (pullOnce),
// again while another writer moves the branch. prev is the tracking ref
// before the fetch (zero for none).
func mergeFetched(ctx context.Context, m *workspace.Workspace, remote string, prev, tipR plumbing.Hash, pol Policy, res *PullResult) error {
	res.Fetched = tipR.String()
	published := func(paths []string) (map[string]map[plumbing.Hash]bool, error) {
		return remoteHistoryBlobs(ctx, m.Repo, trackingHistory(m.Repo, remote, prev, tipR), paths)
	}
	for attempt := 0; ; attempt++ {
		err := pullOnce(ctx, m, remote, tipR, pol, published, res)
		if !errors.Is(err, gitstore.ErrBranchMoved) || attempt >= maxMergeAttempts {
			return err
		}
		jitter(ctx, attempt)
	}
}

func pullOnce(ctx context.Context, m *workspace.Workspace, remote string, tipR plumbing.Hash, pol Policy, published publishedFunc, res *PullResult) error {
	st := m.Store
	tipL, err := st.Tip()
	if err != nil {
		return err
	}
	res.Before, res.After = hashString(tipL), hashString(tipL)
	// A fetched tip this branch already contains may still hold records an
	// earlier pull rejected (e.g. of a device trusted since): the trees are
	// compared anyway, and only what is newly acceptable is merged.
	// One merge-base answers both questions: is the fetched tip already in
	// this branch (behind), can this branch fast-forward to it (ff)?
	behind, ff := false, tipL.IsZero()
	if !tipL.IsZero() {
		base, err := st.MergeBase(ctx, tipL, tipR)
		if err != nil {
			return err
		}
		behind, ff = base == tipR, base == tipL
	}
	t := time.Now()
	remoteView, err := st.ViewAt(tipR)
	if errors.Is(err, gitstore.ErrTooLarge) {
		// Its LAYOUT cannot be read, so nothing of it can be placed.
		res.Rejected = []Rejection{{Record: gitstore.LayoutFile, Reason: string(chain.TooLarge), Detail: fmt.Sprintf("%v: nothing merged", err)}}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read fetched branch: %w", err)
	}
	var localView *gitstore.View
	var base plumbing.Hash
	if !tipL.IsZero() {
		if localView, err = st.ViewAt(tipL); err != nil {
			return err
		}
		base = localView.Root
	}
	// A first pull into a clone without a cache builds the cache of the
	// fetched tip while it verifies (cache.Mirror.BuildAhead): it is put
	// in place only if the merge fast-forwards to that tip.
	var ahead *cache.Ahead
	var vs *verdicts
	if tipL.IsZero() {
		vs = newVerdicts()
		ahead = m.CacheAhead(ctx, tipR, vs.wait)
		defer ahead.Finish(false) // on any early return
	}
	p, err := makePlanTelling(st, localView, remoteView, pol, published, vs)
	if err != nil {
		return err
	}
	if len(p.rejected) > 0 {
		ahead.Finish(false) // the merge cannot be the fetched tip: stop it now
	}
	for i := range p.superseded {
		p.superseded[i].Commit = tipL.String()
		p.superseded[i].Detail = supersededDetail(p.superseded[i])
	}
	res.Durations.Verify = ms(time.Since(t))
	if behind && p.added == 0 && p.snapshots == 0 && p.packages == 0 && len(p.superseded) == 0 && len(p.newKeys) == 0 {
		res.UpToDate = true // what is still rejected was reported when it arrived
		return nil
	}
	t = time.Now()
	parents := []plumbing.Hash{tipL, tipR}
	if behind {
		parents = []plumbing.Hash{tipL}
	} else if ff {
		parents = []plumbing.Hash{tipR}
	}
	name, email := m.Repo.Identity()
	after, err := st.Commit(ctx, gitstore.CommitRequest{
		Base: base, Edits: p.edits, Parents: parents, Expect: tipL,
		Message: mergeMessage(remote, p), Author: gitstore.Author{Name: name, Email: email},
	})
	if err != nil {
		return err
	}
	res.Durations.Merge = ms(time.Since(t))
	if ahead != nil {
		t = time.Now()
		res.cacheAhead = ahead.Finish(after == tipR)
		res.Durations.Cache = ms(time.Since(t)) // what the cache's build took after the merge
	}
	res.merged(p, after)
	return nil
}

// merged fills res with what the plan p merged in commit after.
func (res *PullResult) merged(p *plan, after plumbing.Hash) {
	res.After, res.Added, res.NewKeys, res.Forks = after.String(), p.added, append([]string{}, p.newKeys...), p.forks
	res.Devices, res.Rejected = p.devices, p.rejected
	res.Packages, res.PackageConflicts = p.packages, 0
	res.Superseded = append([]Superseded{}, p.superseded...)
	res.SharedKeys = append([]SharedKey{}, p.sharedKeys...)
	for _, r := range p.rejected {
		if r.Reason == string(chain.PackageConflict) {
			res.PackageConflicts++
		}
	}
	res.verified = p.accepted
	if res.Devices == nil {
		res.Devices = []DeviceResult{}
	}
	if res.Rejected == nil {
		res.Rejected = []Rejection{}
	}
}

// recordPull stores rejections in the cache's quarantine and remembers
// where the last pull started (for `git ctx review`).
func recordPull(ctx context.Context, m *workspace.Workspace, res *PullResult) error {
	// The records this pull verified are not verified again while the cache
	// indexes them (cache.Preverified): the parsed records it carries are
	// not even read again.
	if len(res.verified) > 0 {
		m.Preverified = res.verified
		defer func() { m.Preverified, res.verified = nil, nil }()
	}
	db, err := m.Cache(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(ctx, func(w *cache.Writer) error {
		for _, d := range res.Devices {
			if d.Added > 0 && !d.Rejected {
				if err := w.ClearQuarantine(TrackingRef(res.Remote), d.Repo, d.Device); err != nil {
					return err
				}
			}
		}
		for _, r := range res.Rejected {
			repo := r.Repo
			if r.Reason == string(chain.WrongRepo) || r.Reason == string(chain.RepoMismatch) || r.Reason == string(chain.BadAdoption) {
				repo = "" // not this repository's directory: listed from every id
			}
			if err := w.AddQuarantine(cache.Quarantined{Ref: TrackingRef(res.Remote), RepoID: repo, Device: r.Device,
				Record: r.Record, Reason: r.Reason, Detail: r.Detail}); err != nil {
				return err
			}
		}
		if !res.UpToDate && res.Before != res.After {
			return w.SetTip(LastPullKey(res.Remote), res.Before)
		}
		return nil
	})
}

// recordPulls records the merges a push made once the push is over (the
// cache update is kept out of the window between fetch and push).
func recordPulls(ctx context.Context, m *workspace.Workspace, pulls []*PullResult) error {
	for _, pr := range pulls {
		if err := recordPull(ctx, m, pr); err != nil {
			return err
		}
	}
	return nil
}

// LastPullKey names, in the cache's tips table, the local tip before the
// last pull from remote that changed something.
func LastPullKey(remote string) string { return "last-pull/" + remote }

// mergeMessage is the message of a merge commit. Device ids, paths and
// reasons come from the remote: each is escaped for the terminal
// (termtext.Line), so `git log` cannot be made to show forged lines.
func mergeMessage(remote string, p *plan) string {
	line := termtext.Line
	devs := map[string]bool{}
	for _, d := range p.devices {
		if d.Added > 0 {
			devs[d.Device] = true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ctx: merge %s: %d checkpoints from %d devices\n\n", line(remote), p.added, len(devs))
	for _, d := range p.devices {
		if d.Added > 0 {
			fmt.Fprintf(&b, "%s: +%d checkpoints, verified\n", line(d.Device), d.Added)
		}
	}
	if p.snapshots > 0 {
		fmt.Fprintf(&b, "Snapshots: +%d timeline entries, verified\n", p.snapshots)
	}
	if p.packages > 0 {
		fmt.Fprintf(&b, "Packages: +%d published packages, verified\n", p.packages)
	}
	for _, s := range p.superseded {
		fmt.Fprintf(&b, "Withdrawn: package %s (%s, blob %s, still in %s): the remote already published %s under this name and version; its copy is kept\n",
			line(s.Package), line(s.Path), short(s.Local), short(s.Commit), short(s.Remote))
	}
	for _, k := range p.newKeys {
		fmt.Fprintf(&b, "New device key: %s\n", line(k))
	}
	for i, r := range p.rejected {
		if i == maxMessageRejections {
			fmt.Fprintf(&b, "Rejected: %d more: %s\n", len(p.rejected)-i, reasonCounts(p.rejected))
			break
		}
		fmt.Fprintf(&b, "Rejected: %s %s: %s\n", line(orDash(r.Device)), line(short(r.Record)), line(r.Reason))
	}
	return b.String()
}

// maxMessageRejections bounds the rejections a merge message lists one by
// one (a single fetched commit may bring 200,000); the rest are counted.
const maxMessageRejections = 20

// reasonCounts says how many of rs each reason has, the most frequent
// first: "150000 unexpected_path, 50000 orphan_file".
func reasonCounts(rs []Rejection) string {
	counts := map[string]int{}
	for _, r := range rs {
		counts[r.Reason]++
	}
	reasons := make([]string, 0, len(counts))
	for r := range counts {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := reasons[i], reasons[j]
		return counts[a] > counts[b] || counts[a] == counts[b] && a < b
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", counts[r], r)
	}
	return strings.Join(parts, ", ")
}

// PushOptions configures Push.
type PushOptions struct {
	Options
	// ForceFirstPush allows creating ghyll/memory on a remote that has no
	// branch at all.
	ForceFirstPush bool
	// Attempts bounds push-pull-merge rounds (0 = 64); the rounds are also
	// bounded in time by git config ctx.timeout (default 120 s).
	Attempts int
}

// PushResult says what a push did.
type PushResult struct {
	Remote   string
	Pushed   string
	Attempts int
	Pulls    []*PullResult // merges done because the remote had moved
}

// Err returns the most serious outcome of the pulls a push made: ErrFork
// outranks a rejection (ErrUnverified); nil when every pull was clean.
func (r *PushResult) Err() error {
	var err error
	for _, p := range r.Pulls {
		if e := p.Err(); e != nil && (err == nil || errors.Is(e, ErrFork)) {
			err = e
		}
	}
	return err
}

// Push pushes the memory branch without ever forcing. When the remote
// moved, it pulls (verifying and merging) and tries again, with jittered
// backoff, a bounded number of times.
func Push(ctx context.Context, m *workspace.Workspace, remote string, opt PushOptions) (*PushResult, error) {
	st := m.Store
	tip, err := st.Tip()
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, gitstore.ErrNotInitialized
	}
	if tracked, _ := st.ResolveRef(TrackingRef(remote)); tracked.IsZero() && !opt.ForceFirstPush {
		has, err := RemoteHasBranches(ctx, m.Repo, remote, opt.Options)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, ErrEmptyRemote
		}
	}
	attempts := opt.Attempts
	if attempts <= 0 {
		attempts = 64
	}
	// Under steady contention every attempt may lose with some probability:
	// a fixed small count then fails often, so the real bound is time.
	ctx, cancel := context.WithTimeout(ctx, timeout(m.Repo))
	defer cancel()
	res := &PushResult{Remote: remote, Pulls: []*PullResult{}}
	// The package check runs before the first attempt (the branch may hold
	// merges made elsewhere) and after a merge of this loop only when it
	// left a fetched package out: a merge that took every package the
	// remote publishes cannot replace one, and the check would otherwise
	// sit in the window between fetch and push.
	checkPackages := true
	for i := 0; i < attempts; i++ {
		res.Attempts = i + 1
		tip, err := st.Tip()
		if err != nil {
			return res, err
		}
		if checkPackages {
			if err := checkPushKeepsPackages(ctx, st, remote, tip); err != nil {
				return res, errors.Join(err, recordPulls(ctx, m, res.Pulls))
			}
		}
		err = pushOnce(ctx, m.Repo, remote, opt.Options)
		if err == nil {
			res.Pushed = tip.String()
			// Keep the tracking ref in step even with a narrow fetch refspec.
			_, _ = gitexec.Git(ctx, m.Repo.CommonDir, "update-ref", TrackingRef(remote), tip.String())
			return res, recordPulls(ctx, m, res.Pulls)
		}
		if !errors.Is(err, ErrRejected) {
			return res, err
		}
		if ctx.Err() != nil {
			break
		}
		// Back off first, then fetch, merge and push again straight away:
		// the window in which another push can slip in is the time between
		// our fetch and our push, so nothing may wait inside it.
		jitter(ctx, i)
		pr, err := fetchAndMerge(ctx, m, remote, opt.Options)
		if err != nil {
			return res, errors.Join(err, recordPulls(ctx, m, res.Pulls))
		}
		res.Pulls = append(res.Pulls, pr)
		checkPackages = leftPackagesOut(pr)
	}
	if err := recordPulls(ctx, m, res.Pulls); err != nil {
		return res, err
	}
	return res, fmt.Errorf("%w: the remote kept moving after %d attempts; run 'git ctx sync' again", ErrRejected, res.Attempts)
}

// leftPackagesOut reports whether a pull rejected any package file.
func leftPackagesOut(pr *PullResult) bool {
	for _, r := range pr.Rejected {
		if parts := strings.Split(r.Record, "/"); len(parts) >= 4 && parts[0] == "repos" && parts[2] == gitstore.PackagesDirName {
			return true
		}
	}
	return false
}

// jitter sleeps a randomised, growing delay: under 20 ms for the first two
// retries, then about 50 ms × 2^(attempt-2), capped at 0.8 s: retrying often
// is what wins a slot against teammates who keep pushing.
func jitter(ctx context.Context, attempt int) {
	// A push lost to a teammate who just pushed: the best chance is to
	// fetch, merge and push again at once, so the first retries hardly wait;
	// later ones spread out contenders that keep colliding with each other.
	if attempt < 2 {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(rand.Int64N(int64(20 * time.Millisecond)))):
		}
		return
	}
	base := 50 * time.Millisecond << min(attempt-2, 4)
	d := base/2 + time.Duration(rand.Int64N(int64(base)))
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Summary returns one line per device with news, then one per rejection.
// Device ids, records and details are the remote's: callers printing the
// lines on a terminal escape them (termtext.Line).
func (r *PullResult) Summary() []string {
	var lines []string
	devs := append([]DeviceResult(nil), r.Devices...)
	sort.SliceStable(devs, func(i, j int) bool { return devs[i].Device < devs[j].Device })
	for _, d := range devs {
		switch {
		case d.Fork:
			lines = append(lines, fmt.Sprintf("%s: fork: remote %s vs local %s; +%d merged before it", gitname.Display(d.Device), short(d.Record), short(d.Local), d.Added))
		case d.Rejected:
			lines = append(lines, fmt.Sprintf("%s: +%d checkpoints, verified; rejected %s: %s", gitname.Display(d.Device), d.Added, orDash(gitname.Display(short(d.Record))), d.Reason))
		case d.Added > 0:
			lines = append(lines, fmt.Sprintf("%s: +%d checkpoints, verified", gitname.Display(d.Device), d.Added))
		}
	}
	if r.Packages > 0 {
		lines = append(lines, fmt.Sprintf("packages: +%d published, verified", r.Packages))
	}
	for _, s := range r.Superseded {
		lines = append(lines, s.Detail)
	}
	var paths []Rejection
	for _, rj := range r.Rejected {
		if rj.Device == "" {
			paths = append(paths, rj)
		}
	}
	for i, rj := range paths {
		if i == maxSummaryPaths && len(paths) > maxSummaryPaths+1 {
			lines = append(lines, fmt.Sprintf("rejected %d paths: %s (the first %d above; all of them: git ctx log --unverified)",
				len(paths), reasonCounts(paths), i))
			break
		}
		lines = append(lines, fmt.Sprintf("rejected %s: %s: %s", gitname.Display(rj.Record), rj.Reason, gitname.Display(rj.Detail)))
	}
	for _, k := range r.NewKeys {
		lines = append(lines, fmt.Sprintf("new device %s: key pinned", gitname.Display(k)))
	}
	for _, sk := range r.SharedKeys {
		lines = append(lines, fmt.Sprintf("warning: one key (%s) is published under several device ids: %s (a copied key, or a device set up again under a new id; see 'git ctx devices')",
			sk.Fingerprint, strings.Join(sk.Devices, ", ")))
	}
	return lines
}
