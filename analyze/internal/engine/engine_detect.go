package engine

import (
	"slices"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// useProfile fixes the profile the aggregate's observations were measured
// with: the report's pool span names. (The pair stage needs no word of it:
// an acquire inferred from a call carries its session, record.Acquire.)
func (a *aggregate) useProfile(p rulefmt.Profile) {
	a.profile = p
}

// vocabulary returns the vocabulary the measures read: a config's own, or
// the built-in of the effective profile.
func (a *aggregate) vocabulary() *rulefmt.Vocabulary {
	return a.resolved().ActiveVocabulary()
}

// resolved returns the configuration the measures read: the user's, with
// the effective profile in place of auto unless it has a vocabulary of its
// own.
func (a *aggregate) resolved() rulefmt.Config {
	c := a.cfg
	if c.Vocabulary == nil {
		c.Profile = a.effectiveProfile()
	}
	return c
}

// effectiveProfile returns the profile the measures read: the one fixed by
// useProfile, else the one the summed evidence resolves to. Only a run
// without a vocabulary of its own asks, and its observations resolved
// the profile (observeContext), so a fixed one is never auto.
func (a *aggregate) effectiveProfile() rulefmt.Profile {
	if a.profile != "" {
		return a.profile
	}
	return a.detect.Resolve(rulefmt.ProfileAuto)
}

// reportDetection fills r's recognition section and settings.vocabulary
// from the summed evidence: each resource's vocabulary decided from all
// of it, or a stream's sticky decisions where made.
func (a *aggregate) reportDetection(r *report.Report) {
	r.Recognition, r.Settings.Vocabulary = a.detect.Report(a.detect.Decisions(a.cfg.Profile, a.sticky))
	if v := a.cfg.Vocabulary; v != nil {
		ownRecognition(r, v, a.poolSpans)
	}
}

// ownRecognition makes r's recognition that of a user's own vocabulary v,
// which read poolSpans of the dump's spans: it recognises them as a
// built-in does (settings.vocabulary names it), whatever the built-ins'
// signatures make of them; the names it reads by name leave the list of
// unrecognised names.
func ownRecognition(r *report.Report, v *rulefmt.Vocabulary, poolSpans int) {
	use := report.VocabularyUse{Vocabulary: v.Name, Spans: r.Spans, RecognisedSpans: poolSpans, ExampleResources: []string{}}
	for _, u := range r.Recognition.Vocabularies {
		use.Resources += u.Resources
		for _, e := range u.ExampleResources {
			if len(use.ExampleResources) < vocab.MaxExampleResources && !slices.Contains(use.ExampleResources, e) {
				use.ExampleResources = append(use.ExampleResources, e)
			}
		}
	}
	slices.Sort(use.ExampleResources)
	names := v.PoolSpanNames()
	r.Recognition = report.RecognitionReport{
		RecognisedSpans:   poolSpans,
		UnrecognisedSpans: r.Spans - poolSpans,
		Vocabularies:      []report.VocabularyUse{use},
		UnrecognisedNames: slices.DeleteFunc(r.Recognition.UnrecognisedNames, func(n report.NameCount) bool { return slices.Contains(names, n.Name) }),
	}
	r.Settings.Vocabulary = v.Name
	if poolSpans == 0 {
		r.Settings.Vocabulary = report.VocabNone
	}
}

// engineDetection is an Engine's state for ProfileAuto.
type engineDetection struct {
	// batch is the profile a batch engine decided from every shard's
	// evidence before observing (detectBatch).
	batch rulefmt.Profile
	// sticky is, for an engine that finalizes early, each resource's
	// vocabulary from the first batch that showed one; fixed reports
	// whether the measures' profile has been decided (the aggregate's).
	sticky map[string]string
	fixed  bool
	// used lists the profiles a speculative engine's observations were
	// measured with, to compare with the whole dump's at the end.
	used map[rulefmt.Profile]bool
}

// detectBatch, for a batch engine under ProfileAuto, gathers the evidence
// of every shard's open traces (the whole dump) and decides the profile
// the shards then observe with: the same choice as Analyze's over one
// index. Call it before stop, without e.mu.
func (e *Engine) detectBatch() {
	if e.cfg.Profile != rulefmt.ProfileAuto || e.finalizesEarly() {
		return
	}
	replies := make(chan *vocab.Detection, len(e.shards))
	e.send(shardMsg{detect: replies})
	sum := vocab.NewDetection()
	for range e.shards {
		sum.Merge(<-replies)
	}
	e.mu.Lock()
	e.det.batch = sum.Resolve(rulefmt.ProfileAuto)
	e.agg.useProfile(e.det.batch)
	e.mu.Unlock()
}

// observeConfig returns the configuration to observe x (whole traces
// shard finalized while reading batch seq) with: e.cfg, its ProfileAuto
// replaced by the profile decided. A batch engine decided it from the
// whole dump (detectBatch). An engine that finalizes early decides each
// resource's vocabulary from the first finalization that shows one,
// sticky, and the measures' profile with the first resource decided;
// before that it observes with ProfileDefault, which reads only our own
// span names (the evidence of those traces has none). "First" is in the
// order of the batches, and of the shards within one (awaitTurn), never
// in the order the shards' observers get here: a finalization that could
// decide anything waits for its turn, so the same input gives the same
// vocabularies on every run (settled says when none could). The
// detection of x it made to decide, if it made one, comes back with the
// configuration, for the observation to take as x's evidence rather than
// walk x's spans a second time (observeWith).
func (e *Engine) observeConfig(x *index.Index, shard int, seq int64) (rulefmt.Config, *vocab.Detection) {
	cfg := e.cfg
	if cfg.Profile != rulefmt.ProfileAuto {
		return cfg, nil
	}
	if !e.finalizesEarly() {
		e.mu.Lock()
		cfg.Profile = e.det.batch
		e.mu.Unlock()
		return cfg, nil
	}
	d := vocab.Detect(x, nil)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.det.sticky == nil {
		e.det.sticky, e.det.used = map[string]string{}, map[rulefmt.Profile]bool{}
	}
	if !e.det.settled(d) {
		e.awaitTurn(shard, seq)
	}
	decided := map[string]string{}
	for k, ev := range d.Res {
		v, ok := e.det.sticky[k]
		if !ok {
			if v = vocab.Decide(ev); v == report.VocabNone {
				continue
			}
			e.det.sticky[k] = v
		}
		decided[k] = v
	}
	if !e.det.fixed && len(decided) > 0 {
		e.det.fixed = true
		e.agg.useProfile(d.EffectiveProfile(decided))
	}
	cfg.Profile = rulefmt.ProfileDefault
	if e.det.fixed {
		cfg.Profile = e.agg.profile
	}
	e.det.used[cfg.Profile] = true
	return cfg, d
}

// settled reports whether observing traces of evidence d can neither
// decide anything nor be observed otherwise, whichever finalizations come
// before it: the measures' profile is fixed, and each resource d shows is
// decided already or shows no vocabulary. Only such a finalization may
// skip its turn (observeConfig); in a stream that is every one once its
// resources are known. e.mu must be held.
func (det *engineDetection) settled(d *vocab.Detection) bool {
	if !det.fixed {
		return false
	}
	for k, ev := range d.Res {
		if _, ok := det.sticky[k]; !ok && vocab.Decide(ev) != report.VocabNone {
			return false
		}
	}
	return true
}

// checkDetection spoils a speculative engine whose observations were not
// all measured with the profile the whole dump's evidence gives: its
// figures would differ from a batch run's, so the input is read again.
// Call it with e.mu held, after the last observation.
func (e *Engine) checkDetection() {
	if !e.speculative || e.cfg.Profile != rulefmt.ProfileAuto {
		return
	}
	final := e.agg.detect.Resolve(rulefmt.ProfileAuto)
	for p := range e.det.used {
		if p != final {
			e.spoil(endOfRead)
			return
		}
	}
	e.agg.useProfile(final)
}
