package memindex

// newWith returns an empty index (New's) with its knobs changed by tune
// (nil: the defaults), before its first write.
func newWith(tune func(*knobs)) *Index {
	x := New()
	if tune != nil {
		tune(x.knobs)
	}
	return x
}
