package gitstore

import (
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/internal/gitobject"
)

// writeLoose stores one object as a loose object (internal/gitobject, the
// writer the git session store uses too) and returns its id. An object that
// already exists, loose or packed (a merge builds trees a fetch brought),
// is not written again.
func (s *Store) writeLoose(t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	id, err := s.objects().Write(gitobject.Type(t.String()), content)
	var h plumbing.Hash
	copy(h[:], id)
	return h, err
}

// objects is the repository's object database (SHA-1: Open refuses
// others). Its Has looks in the packs only: the writer looks for a loose
// copy itself.
func (s *Store) objects() gitobject.Writer {
	return gitobject.Writer{Dir: filepath.Join(s.Repo.CommonDir, "objects"), Has: func(id gitobject.ID) bool {
		var h plumbing.Hash
		copy(h[:], id)
		return s.hasPacked(h)
	}}
}

// hasPacked reports whether object id is in one of the repository's packs.
func (s *Store) hasPacked(id plumbing.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.hasPacked(id)
}
