package chain

import (
	"fmt"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// sessionLinks checks the linkage of a ghyll-v1 chain (Input.SessionRoots,
// docs/FORMAT.md §5.1). ghyll's library starts a new root (parent = the
// zero hash) for every session and links each later record of a session to
// that session's latest record, so one device's chain file interleaves
// several chains; git-ctx itself links every record to the previous entry.
// A record with session S and parent p is linked when:
//
//   - p is the zero hash: a new root; refused (SessionFork) when S is not
//     "" and S already has a record earlier in the chain;
//   - p is the previous entry's hash (the linear rule, any session);
//   - S is not "" and p is the latest earlier record of session S (a later
//     record of S already following p is a fork of the session:
//     SessionFork);
//   - S is "" (ghyll's compaction record) and p is the latest earlier
//     record of p's session, which is not "".
//
// Anything else is BrokenChain. Records without a session start or continue
// no session: only the next entry may link to one.
//
// The sessions of Prior (records verified earlier) are read only when an
// entry's linkage needs them, all at once; the sessions of the entries
// verified here come from their verified files.
type sessionLinks struct {
	prior  []checkpoint.ChainEntry
	load   Loader         // Prior's files
	hashes []string       // every position's hash: Prior, then accepted entries
	pos    map[string]int // hash → position
	sess   []string       // session by position (Prior's once loaded)
	loaded bool           // Prior's sessions read
	head   map[string]int // session (not "") → its latest position
}

func newSessionLinks(in Input) *sessionLinks {
	s := &sessionLinks{prior: in.Prior, load: in.PriorLoad, pos: make(map[string]int, len(in.Prior)+len(in.Entries)), head: map[string]int{}}
	if s.load == nil {
		s.load = in.Load
	}
	for i, e := range in.Prior {
		s.hashes = append(s.hashes, e.Hash)
		s.pos[e.Hash] = i
	}
	s.sess = make([]string, len(in.Prior))
	s.loaded = len(in.Prior) == 0
	return s
}

// holds reports whether hash is at some position already (nil: never).
func (s *sessionLinks) holds(hash string) bool {
	if s == nil {
		return false
	}
	_, ok := s.pos[hash]
	return ok
}

// accept adds a verified entry of session to the positions.
func (s *sessionLinks) accept(e checkpoint.ChainEntry, session string) {
	if s == nil {
		return
	}
	at := len(s.hashes)
	s.hashes = append(s.hashes, e.Hash)
	s.sess = append(s.sess, session)
	s.pos[e.Hash] = at
	if session != "" {
		s.head[session] = at
	}
}

// link checks that e, a verified record of session, links as the rule
// says; a failure returns its reason and detail (nil: no rule to check).
func (s *sessionLinks) link(e checkpoint.ChainEntry, session string) (Reason, string) {
	if s == nil {
		return "", ""
	}
	at := len(s.hashes)
	switch {
	case e.Parent == checkpoint.ZeroHash:
		if session == "" {
			return "", ""
		}
		if r, detail := s.loadPrior(); r != "" {
			return r, detail
		}
		if j, ok := s.head[session]; ok {
			return SessionFork, fmt.Sprintf("session %q starts a second root: it has records up to entry %d", session, j+1)
		}
		return "", ""
	case at > 0 && e.Parent == s.hashes[at-1]:
		return "", ""
	}
	j, ok := s.pos[e.Parent]
	if !ok {
		return BrokenChain, fmt.Sprintf("parent %s is no earlier entry of this chain", short(e.Parent))
	}
	if r, detail := s.loadPrior(); r != "" {
		return r, detail
	}
	ps := s.sess[j]
	switch {
	case ps == "":
		return BrokenChain, fmt.Sprintf("parent %s (entry %d) is a record without a session, which only the next entry may continue", short(e.Parent), j+1)
	case session != "" && ps != session:
		return BrokenChain, fmt.Sprintf("parent %s (entry %d) is a record of session %q, not %q, and not the previous entry", short(e.Parent), j+1, ps, session)
	case s.head[ps] != j && session == "":
		return BrokenChain, fmt.Sprintf("parent %s (entry %d) is not the latest record of session %q (entry %d is)", short(e.Parent), j+1, ps, s.head[ps]+1)
	case s.head[ps] != j:
		return SessionFork, fmt.Sprintf("session %q already continues past %s (entry %d) at entry %d", ps, short(e.Parent), j+1, s.head[ps]+1)
	}
	return "", ""
}

// loadPrior reads the sessions of Prior once. Prior was verified earlier,
// so a file is only parsed and matched to its entry's hash; one that no
// longer is (gone, unreadable) fails the entry being linked.
func (s *sessionLinks) loadPrior() (Reason, string) {
	if s.loaded {
		return "", ""
	}
	for j, e := range s.prior {
		cp, r, detail := parseRecord(s.load, e)
		if r != "" {
			return r, fmt.Sprintf("entry %d (%s), which this record's linkage reads: %s", j+1, short(e.Hash), detail)
		}
		s.sess[j] = cp.SessionID
		if cur, ok := s.head[cp.SessionID]; cp.SessionID != "" && (!ok || cur < j) {
			s.head[cp.SessionID] = j
		}
	}
	s.loaded = true
	return "", ""
}
