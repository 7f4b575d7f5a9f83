package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// statusCountRows reads the per-device counts of d's cache file
// (device_counts, schema 8) and what they must equal: the records rows
// counted per repository and device, with their verified flags and
// newest ts.
func statusCountRows(t *testing.T, d *testrepo.Device) (kept, counted []string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(d.Dir, ".git", "ctx", "cache.db")+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read := func(q string) []string {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var repo, dev string
			var n, v, ts int64
			if err := rows.Scan(&repo, &dev, &n, &v, &ts); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s %s n=%d verified=%d last=%d", repo[:8], dev, n, v, ts))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return read(`SELECT repo_id, device, n, verified, last_ts FROM device_counts ORDER BY 1, 2`),
		read(`SELECT r.repo_id, r.device, count(*), coalesce(sum(c.verified), 0), max(r.ts)
			FROM records r LEFT JOIN checkpoints c ON c.hash = r.hash GROUP BY 1, 2 ORDER BY 1, 2`)
}

// wantStatusCounts checks status (text and --json) on d against the
// expected counts, and that the counts the cache keeps for it equal the
// rows they count.
func wantStatusCounts(t *testing.T, what string, d *testrepo.Device, total, own, devices int) {
	t.Helper()
	st := inproc.Status(t, d.Dir, d.Env)
	if st.Checkpoints != total || st.DeviceCheckpoints != own || st.Devices != devices {
		t.Fatalf("%s: status --json counts %d, %d by this device, %d devices; want %d, %d, %d",
			what, st.Checkpoints, st.DeviceCheckpoints, st.Devices, total, own, devices)
	}
	want := fmt.Sprintf("Checkpoints:   %d in this repository, %d by this device, %d devices", total, own, devices)
	if txt := d.Must(t, "status"); !strings.Contains(txt, want) {
		t.Fatalf("%s: status lacks %q:\n%s", what, want, txt)
	}
	kept, counted := statusCountRows(t, d)
	if len(counted) == 0 || !reflect.DeepEqual(kept, counted) {
		t.Fatalf("%s: the cache's per-device counts\n %q\ndiffer from its rows\n %q", what, kept, counted)
	}
}

// TestStatusCountsAcrossPulls: status's per-device counts, kept in the
// cache as rows are written (not counted over every record), stay right
// through appends, pushes and pulls both ways, a pull that quarantines a
// record (the rejected record never reaches the cache), and a reindex.
func TestStatusCountsAcrossPulls(t *testing.T) {
	s, rem, a := newTeam(t)
	for i := 0; i < 3; i++ {
		a.Checkpoint(t, fmt.Sprintf("a%d", i))
	}
	wantStatusCounts(t, "A after 3 appends", a, 3, 3, 1)
	a.Must(t, "push")

	b := inproc.CloneDevice(t, s, "B", rem)
	b.Must(t, "pull")
	wantStatusCounts(t, "B after its first pull", b, 3, 0, 1)
	b.Must(t, "init")
	b.Checkpoint(t, "b0")
	b.Checkpoint(t, "b1")
	b.Must(t, "push")
	wantStatusCounts(t, "B after 2 appends", b, 5, 2, 2)

	a.Must(t, "pull")
	wantStatusCounts(t, "A after pulling B's records", a, 5, 3, 2)

	// A record of A that fails its own hash, and one after it: B's pull
	// quarantines them and takes nothing of A's beyond its last good one.
	repoID := inproc.Status(t, a.Dir, a.Env).RepoID
	unhAppendPoisoned(t, a, repoID, "caf\xe9 from an older version")
	a.Checkpoint(t, "a after the poisoned record")
	a.Must(t, "push")
	if r := b.Ctx(t, "pull"); r.Code != 1 || !strings.Contains(r.Stdout, "hash_mismatch") {
		t.Fatalf("B's pull should quarantine the poisoned record: %s", r)
	}
	wantStatusCounts(t, "B after a quarantining pull", b, 5, 2, 2)
	// A's own cache holds them, unverified.
	wantStatusCounts(t, "A with its poisoned records", a, 7, 5, 2)

	a.Must(t, "reindex")
	wantStatusCounts(t, "A after reindex", a, 7, 5, 2)
	b.Must(t, "reindex")
	wantStatusCounts(t, "B after reindex", b, 5, 2, 2)
}
