package snapshot

// ApplyCaps truncates s's lists to the builder's caps, as lean-ctx's
// snapshot builder does, silently: lineage.items keeps the last (most
// recent) MaxLineageItems, ledger.items the last MaxLedgerItems, and
// session.decisions and session.files_touched each their first
// MaxSessionList entries. lineage.items_recorded (a running total) is not
// changed. The truncated slices share their backing arrays with the
// originals. Call it before Finalize or Sign: it changes the id.
func (s *Snapshot) ApplyCaps() {
	if n := len(s.Lineage.Items); n > MaxLineageItems {
		s.Lineage.Items = s.Lineage.Items[n-MaxLineageItems:]
	}
	if n := len(s.Ledger.Items); n > MaxLedgerItems {
		s.Ledger.Items = s.Ledger.Items[n-MaxLedgerItems:]
	}
	if se := s.Session; se != nil {
		if len(se.Decisions) > MaxSessionList {
			se.Decisions = se.Decisions[:MaxSessionList]
		}
		if len(se.FilesTouched) > MaxSessionList {
			se.FilesTouched = se.FilesTouched[:MaxSessionList]
		}
	}
}
