package rulefmt

import "slices"

// IndexOptions names the attributes an index keeps besides the vocabulary's
// own. The zero value keeps the vocabulary only.
type IndexOptions struct {
	// SpanAttrs are extra span attribute keys to keep (selector keys, a
	// --scope-attr key).
	SpanAttrs []string
	// ResourceAttrs are extra resource attribute keys to keep.
	ResourceAttrs []string
}

// RulesIndexOptions returns the attributes an index must keep to evaluate the
// rules: every key their selectors read and every distinct attribute.
func RulesIndexOptions(rules []Rule) IndexOptions {
	var o IndexOptions
	add := func(s *Selector) {
		if s != nil {
			o.SpanAttrs = append(o.SpanAttrs, s.SpanAttributeKeys()...)
			o.ResourceAttrs = append(o.ResourceAttrs, s.ResourceAttributeKeys()...)
		}
	}
	addSel := func(s *SpanSelector) {
		if s != nil {
			add(&s.Selector)
			add(s.Under)
			add(s.NotUnder)
		}
	}
	for i := range rules {
		r := &rules[i]
		add(r.Scope.Root)
		add(r.CompleteWhen)
		addSel(r.Select)
		for _, e := range r.Expect {
			addSel(e.Select)
			if e.Attribute != "" {
				o.SpanAttrs = append(o.SpanAttrs, e.Attribute)
			}
		}
	}
	return o
}

// MergeIndexOptions returns the union of several IndexOptions, for an index
// that serves both the analysis and the rules.
func MergeIndexOptions(opts ...IndexOptions) IndexOptions {
	var o IndexOptions
	for _, x := range opts {
		o.SpanAttrs = append(o.SpanAttrs, x.SpanAttrs...)
		o.ResourceAttrs = append(o.ResourceAttrs, x.ResourceAttrs...)
	}
	slices.Sort(o.SpanAttrs)
	slices.Sort(o.ResourceAttrs)
	o.SpanAttrs = slices.Compact(o.SpanAttrs)
	o.ResourceAttrs = slices.Compact(o.ResourceAttrs)
	return o
}
