package checkpoints

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// ImportResult reports a ghyll import.
type ImportResult struct {
	Imported []ImportedRecord
	Skipped  []SkippedRecord
	Already  int
}

// ImportedRecord maps a ghyll checkpoint to the record that now holds it.
type ImportedRecord struct {
	From string
	Hash string
	Rule checkpoint.Rule
}

// SkippedRecord is a row that did not verify.
type SkippedRecord struct {
	Hash   string
	Device string
	Reason string
}

// ImportGhyllDB verifies every checkpoint of a ghyll memory.db (hash under
// either rule, trying the version and the null/[] forms of files and tools
// that ghyll's store loses; signature under <keysDir>/<device>.pub) and
// appends those that verify to this device's chain, in one commit, each with
// an "imported_from" member naming the ghyll hash (in a ghyll-v1 branch,
// whose rule leaves unknown members out of the hash: a last summary line
// "imported_from: ghyll:<hash>" instead). Rows already imported are skipped,
// so importing again is a no-op.
func ImportGhyllDB(ctx context.Context, w *workspace.Workspace, dbPath, keysDir string) (*ImportResult, error) {
	rows, err := cache.ReadGhyllDB(ctx, dbPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", workspace.ErrInput, err)
	}
	repoID, db, err := w.RepoCache(ctx)
	if err != nil {
		return nil, err
	}
	done, err := db.ImportedFrom(ctx, repoID)
	db.Close()
	if err != nil {
		return nil, err
	}
	// In a ghyll-v1 branch records are sealed under ghyll's rule, which
	// covers no unknown member: the origin goes into the summary instead.
	view, err := w.Store.View()
	if err != nil {
		return nil, err
	}
	ghyllRule := view.Layout.Rule() == checkpoint.RuleGhyllV2
	res := &ImportResult{Imported: []ImportedRecord{}, Skipped: []SkippedRecord{}}
	keys := map[string]ed25519.PublicKey{}
	var drafts []gitstore.Draft
	var origins []ImportedRecord
	for _, r := range rows {
		cp := r.Checkpoint
		skip := func(format string, args ...any) {
			res.Skipped = append(res.Skipped, SkippedRecord{Hash: cp.Hash, Device: cp.DeviceID, Reason: fmt.Sprintf(format, args...)})
		}
		if done["ghyll:"+cp.Hash] {
			res.Already++
			continue
		}
		rule, err := matchGhyllRow(&cp, r)
		if err != nil {
			skip("%v", err)
			continue
		}
		pub, ok := keys[cp.DeviceID]
		if !ok {
			pub, err = readGhyllKey(keysDir, cp.DeviceID)
			if err != nil {
				skip("%v", err)
				continue
			}
			keys[cp.DeviceID] = pub
		}
		if err := cp.VerifySignature(pub); err != nil {
			skip("%v", err)
			continue
		}
		origin, _ := json.Marshal("ghyll:" + cp.Hash)
		d := cp
		d.Hash, d.Signature, d.ParentHash, d.Version = "", "", "", 0
		if !chain.BindsTo(d.RepoRemote, repoID) {
			// The re-signed copy belongs to this repository (FORMAT §3.3).
			d.RepoRemote = w.RepoField(repoID)
		}
		// Re-signing would vouch for every member: what the ghyll hash did
		// not cover (ghyll's rule: emb, unknown members) is left out.
		var keep []checkpoint.Member
		if rule.CoversUnknown() {
			keep = cp.Extra
		}
		if !rule.CoversEmbedding() {
			d.Embedding = nil
		}
		d.Extra = append(append([]checkpoint.Member(nil), keep...), checkpoint.Member{Key: "imported_from", Value: origin})
		if ghyllRule {
			d.Extra = nil
			d.Summary += "\n\n" + cache.ImportedFromTrailer + "ghyll:" + cp.Hash
		}
		drafts = append(drafts, d)
		origins = append(origins, ImportedRecord{From: cp.Hash, Rule: rule})
		done["ghyll:"+cp.Hash] = true
	}
	if len(drafts) == 0 {
		return res, nil
	}
	dev, err := w.Device()
	if err != nil {
		return nil, err
	}
	ar, err := w.Store.Append(ctx, gitstore.AppendRequest{RepoID: repoID, Device: dev, Author: w.Author(),
		Drafts: drafts, KeepTimestamps: true, FixRepoID: true})
	if err != nil {
		return nil, err
	}
	for i, cp := range ar.Checkpoints {
		origins[i].Hash = cp.Hash
	}
	res.Imported = origins
	return res, nil
}

// matchGhyllRow finds the version and list forms under which the row's hash
// verifies, and leaves cp in that form.
func matchGhyllRow(cp *checkpoint.Checkpoint, r cache.GhyllRow) (checkpoint.Rule, error) {
	if !checkpoint.IsHexHash(cp.Hash) || !checkpoint.IsHexHash(cp.ParentHash) {
		return "", errors.New("hash or parent is not 64 lowercase hex characters")
	}
	listForms := func(stored []string, text string) [][]string {
		forms := [][]string{stored}
		if text == "[]" {
			forms = append(forms, nil) // ghyll stored a nil list as []
		} else if text == "null" {
			forms = append(forms, []string{})
		}
		return forms
	}
	for _, v := range []int{2, 1} {
		for _, files := range listForms(cp.FilesTouched, r.FilesText) {
			for _, tools := range listForms(cp.ToolsUsed, r.ToolsText) {
				c := *cp
				c.Version, c.FilesTouched, c.ToolsUsed = v, files, tools
				if rule, err := c.MatchRule(); err == nil {
					*cp = c
					return rule, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%w: no version or list form reproduces the stored hash", checkpoint.ErrHashMismatch)
}

func readGhyllKey(dir, device string) (ed25519.PublicKey, error) {
	if dir == "" {
		return nil, fmt.Errorf("no public key for device %q: pass --ghyll-keys DIR", device)
	}
	p := filepath.Join(dir, device+".pub")
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("no public key for device %q (%v): pass --ghyll-keys DIR", device, err)
	}
	defer f.Close()
	pub, err := checkpoint.ReadPublicKey(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return pub, nil
}
