package repository

// Clone returns a deep copy of p: nothing it holds (texts, linked IDs,
// the recurrence, overrides and their optional fields, origin, kind
// fields) is shared with p, so the copy may be changed (by an update
// function that runs more than once, or a write tried on a scratch copy)
// without changing p. Nil and empty values stay as they are.
func (p *Record) Clone() *Record {
	if p == nil {
		return nil
	}
	c := *p
	c.Title, c.Content, c.Excerpt, c.Slug = p.Title.Clone(), p.Content.Clone(), p.Excerpt.Clone(), p.Slug.Clone()
	c.Origin = clonePtr(p.Origin)
	c.Source = clonePtr(p.Source)
	if p.Event != nil {
		c.Event = p.Event.clone()
	}
	c.Venue = p.Venue.clone()
	c.Organizer = clonePtr(p.Organizer)
	if p.Image != nil {
		img := *p.Image
		img.Sizes = cloneSlice(p.Image.Sizes)
		c.Image = &img
	}
	return &c
}

// clone returns a deep copy of e.
func (e *EventFields) clone() *EventFields {
	c := *e
	c.Cost = cloneSlice(e.Cost)
	c.Website = clonePtr(e.Website)
	c.Categories, c.Tags = cloneSlice(e.Categories), cloneSlice(e.Tags)
	c.Venues, c.Organizers = cloneSlice(e.Venues), cloneSlice(e.Organizers)
	c.Recurrence = e.Recurrence.Clone()
	if e.Overrides != nil {
		c.Overrides = make([]OccurrenceOverride, len(e.Overrides))
		for i := range e.Overrides {
			c.Overrides[i] = e.Overrides[i].clone()
		}
	}
	return &c
}

// clone returns a deep copy of o.
func (o OccurrenceOverride) clone() OccurrenceOverride {
	c := o
	c.Title, c.Content, c.Excerpt = o.Title.Clone(), o.Content.Clone(), o.Excerpt.Clone()
	c.StartLocal, c.EndLocal, c.Status, c.Website = clonePtr(o.StartLocal), clonePtr(o.EndLocal), clonePtr(o.Status), clonePtr(o.Website)
	c.Featured = clonePtr(o.Featured)
	c.EventStatus, c.EventStatusReason = clonePtr(o.EventStatus), clonePtr(o.EventStatusReason)
	if o.Venues != nil {
		v := cloneSlice(*o.Venues)
		c.Venues = &v
	}
	if o.Organizers != nil {
		v := cloneSlice(*o.Organizers)
		c.Organizers = &v
	}
	if o.Cost != nil {
		v := cloneSlice(*o.Cost)
		c.Cost = &v
	}
	return c
}

// clone returns a deep copy of v (nil for nil).
func (v *VenueFields) clone() *VenueFields {
	if v == nil {
		return nil
	}
	c := *v
	c.GeoLat, c.GeoLng = clonePtr(v.GeoLat), clonePtr(v.GeoLng)
	return &c
}

// clonePtr returns a pointer to a copy of *p (nil for nil); T holds no
// references.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// cloneSlice returns a copy of s, nil for nil and empty for empty.
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
