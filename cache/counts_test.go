package cache_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// countRow is one device's counts in one repository.
type countRow struct {
	Repo, Device            string
	N, Verified, LastSeenTS int64
}

// countRows runs q (repo, device, n, verified, last ts) on the cache file
// of m directly.
func countRows(t *testing.T, m *workspace.Workspace, q string) []countRow {
	t.Helper()
	db := workspacetest.OpenRaw(t, m)
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []countRow
	for rows.Next() {
		var r countRow
		if err := rows.Scan(&r.Repo, &r.Device, &r.N, &r.Verified, &r.LastSeenTS); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// countedRows is what device_counts must hold: the records rows counted
// per repository and device, with their verified flags and newest ts.
const countedRows = `SELECT r.repo_id, r.device, count(*), coalesce(sum(c.verified), 0), max(r.ts)
	FROM records r LEFT JOIN checkpoints c ON c.hash = r.hash GROUP BY r.repo_id, r.device ORDER BY 1, 2`

// wantDeviceCounts refreshes the cache of m and checks that the per-device
// counts it keeps (device_counts, schema 8) equal the rows they count, and
// that Counts and DeviceStats answer from them: total records rows, and
// how many of them are verified, across all repositories.
func wantDeviceCounts(t *testing.T, m *workspace.Workspace, total, verified int) {
	t.Helper()
	ctx := workspacetest.Ctx(t)
	db, err := m.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := countRows(t, m, countedRows)
	got := countRows(t, m, `SELECT repo_id, device, n, verified, last_ts FROM device_counts ORDER BY 1, 2`)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("device_counts:\n got  %+v\n want %+v", got, want)
	}
	n, v := 0, 0
	for _, r := range want {
		n, v = n+int(r.N), v+int(r.Verified)
	}
	if n != total || v != verified {
		t.Fatalf("%d records rows of which %d verified, want %d and %d (%+v)", n, v, total, verified, want)
	}
	db, err = m.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repos := map[string]bool{}
	for _, r := range want {
		repos[r.Repo] = true
	}
	for repo := range repos {
		sum, by, err := db.Counts(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := db.DeviceStats(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		wantBy, wantStats, wantSum := map[string]int{}, map[string]cache.DeviceStat{}, 0
		for _, r := range want {
			if r.Repo == repo {
				wantBy[r.Device], wantSum = int(r.N), wantSum+int(r.N)
				wantStats[r.Device] = cache.DeviceStat{Count: int(r.N), LastSeen: r.LastSeenTS, Verified: int(r.Verified)}
			}
		}
		if sum != wantSum || !reflect.DeepEqual(by, wantBy) {
			t.Errorf("Counts(%s) = %d %v, want %d %v", repo[:8], sum, by, wantSum, wantBy)
		}
		if !reflect.DeepEqual(stats, wantStats) {
			t.Errorf("DeviceStats(%s) = %+v, want %+v", repo[:8], stats, wantStats)
		}
	}
}

// TestDeviceCountsFollowTheRows: the per-device counts status reads are
// kept right by every way rows reach the cache: the first build, appends
// (incremental refreshes), another device's records and another
// repository's fetched in, a record that fails verification (it and the
// records after it are counted, as unverified), and a reindex.
func TestDeviceCountsFollowTheRows(t *testing.T) {
	w, repo, a := initDev(t, "")
	ctx := workspacetest.Ctx(t)
	for i := 0; i < 3; i++ {
		a.Record(t, workspacetest.Say("a %d", i))
	}
	wantDeviceCounts(t, a.Workspace, 3, 3) // the first build
	a.Record(t, workspacetest.Say("a 3"))
	wantDeviceCounts(t, a.Workspace, 4, 4) // an incremental refresh

	// A second device in a clone, one record under another repository id;
	// the first repository fetches them (what a pull's indexing does).
	other := filepath.Join(w.Root, "other")
	workspacetest.Git(t, w.Root, "clone", "-q", repo, other)
	workspacetest.Git(t, other, "fetch", "-q", "origin", "+"+gitstore.BranchRef+":"+gitstore.BranchRef)
	workspacetest.Git(t, other, "config", "ctx.repoId", a.MustRepoID(t))
	b := workspacetest.Open(t, other, w.Home("b"))
	id, err := b.Identity()
	if err != nil {
		t.Fatal(err)
	}
	b.Record(t, workspacetest.Say("b 0"))
	if _, err := b.Store.Append(ctx, gitstore.AppendRequest{RepoID: gitrepo.HashID("another/repository"),
		Device: gitstore.Device{ID: id.DeviceID, Key: id.Private},
		Drafts: []gitstore.Draft{{Summary: "b in another repository", RepoRemote: "another/repository"}}}); err != nil {
		t.Fatal(err)
	}
	b.Record(t, workspacetest.Say("b 1"))
	workspacetest.Git(t, repo, "fetch", "-q", other, "+"+gitstore.BranchRef+":"+gitstore.BranchRef)
	wantDeviceCounts(t, a.Workspace, 7, 7)

	// Records of a appended but not cached yet, the first of them then
	// edited in place: it and every later record of a are unverified.
	c := a.Record(t, workspacetest.Say("cp 5"))
	a.Record(t, workspacetest.Say("cp 6"))
	tamperSummary(t, a, a.MustRepoID(t), c, "cp 5", "cp 5, but better")
	wantDeviceCounts(t, a.Workspace, 9, 7)
	a.Record(t, workspacetest.Say("cp 7"))
	wantDeviceCounts(t, a.Workspace, 10, 7)
	if n := a.Notes.Take(); workspacetest.ContainsAny(n, "rebuilding") {
		t.Fatalf("setup: the refreshes rebuilt the cache: %q", n)
	}

	// A rebuild counts the same.
	if err := a.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	wantDeviceCounts(t, a.Workspace, 10, 7)
	st, err := checkpoints.ReadStatus(ctx, a.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if st.Checkpoints != 9 || st.DeviceCheckpoints != 7 {
		t.Errorf("status: %d checkpoints, %d by this device; want 9 and 7", st.Checkpoints, st.DeviceCheckpoints)
	}
}

// makeSchema7 turns the cache of m into the file git-ctx of cache schema 7
// wrote (schema 8 without device_counts and its trigger), with a marker
// row a rebuild would not keep.
func makeSchema7(t *testing.T, m *workspace.Workspace) {
	t.Helper()
	execCache(t, m, `DROP TRIGGER records_device_counts`)
	execCache(t, m, `DROP TABLE device_counts`)
	execCache(t, m, `UPDATE meta SET value = '7' WHERE key = 'schema'`)
	execCache(t, m, `INSERT INTO tips(ref, commit_id, indexed_at) VALUES ('marker', 'kept by a migration', 0)`)
}

// TestSchema7MigratedInPlace: a cache file of schema 7 (before the
// per-device counts) is brought to schema 8 in place, not rebuilt (a
// rebuild verifies every record of the branch again), and its counts are
// those of the rows it holds, kept right by the refresh that follows.
func TestSchema7MigratedInPlace(t *testing.T) {
	_, _, a := initDev(t, "")
	for i := 0; i < 3; i++ {
		a.Record(t, workspacetest.Say("a %d", i))
	}
	wantDeviceCounts(t, a.Workspace, 3, 3)
	makeSchema7(t, a.Workspace)
	a.Record(t, workspacetest.Say("after the upgrade"))
	a.Notes.Take()
	wantDeviceCounts(t, a.Workspace, 4, 4)
	if n := a.Notes.Take(); workspacetest.ContainsAny(n, "rebuilding") {
		t.Errorf("the schema 7 file was rebuilt: %q", n)
	}
	if got := workspacetest.RawCount(t, a.Workspace, `SELECT count(*) FROM tips WHERE ref = 'marker'`); got != 1 {
		t.Errorf("the schema 7 file was replaced, not migrated")
	}
	if got := workspacetest.RawCount(t, a.Workspace, fmt.Sprintf(`SELECT count(*) FROM meta WHERE key = 'schema' AND value = '%d'`, cache.SchemaVersion)); got != 1 {
		t.Errorf("schema not %d after the migration", cache.SchemaVersion)
	}
	// The migrated file has the schema a rebuild makes, object for object.
	migrated := schemaObjects(t, a.Workspace)
	if err := a.Reindex(workspacetest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	if rebuilt := schemaObjects(t, a.Workspace); !reflect.DeepEqual(migrated, rebuilt) {
		t.Errorf("schema after the migration:\n %q\nafter a rebuild:\n %q", migrated, rebuilt)
	}
}

// schemaObjects lists the tables, indexes and triggers of m's cache file
// with their SQL, whitespace folded.
func schemaObjects(t *testing.T, m *workspace.Workspace) []string {
	t.Helper()
	db := workspacetest.OpenRaw(t, m)
	defer db.Close()
	rows, err := db.Query(`SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var typ, name, q string
		if err := rows.Scan(&typ, &name, &q); err != nil {
			t.Fatal(err)
		}
		out = append(out, typ+" "+name+" "+strings.Join(strings.Fields(q), " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchema7MigratedOnce: processes opening the same schema 7 file at
// once migrate it once between them (the counts are not doubled) and all
// open it.
func TestSchema7MigratedOnce(t *testing.T) {
	_, _, a := initDev(t, "")
	for i := 0; i < 4; i++ {
		a.Record(t, workspacetest.Say("a %d", i))
	}
	wantDeviceCounts(t, a.Workspace, 4, 4)
	makeSchema7(t, a.Workspace)
	ctx := workspacetest.Ctx(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := cache.Open(ctx, a.CacheDir())
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	wantDeviceCounts(t, a.Workspace, 4, 4)
}
