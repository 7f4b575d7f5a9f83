package gitrepo

// ConfigMap exposes a Repo's whole configuration to the external tests.
func ConfigMap(r *Repo) map[string][]string { return r.config }

// InProcess reports whether Open answered without running git.
func InProcess(r *Repo) bool { return r.workTree != "" }

// DecodeText exposes decodeText to the external tests.
var DecodeText = decodeText
