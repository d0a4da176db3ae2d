package wpimport

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// claimIDs checks the post IDs of the records mapped: post IDs are
// shared by every post kind (as in WordPress), so an ID given to two
// kinds fails the second (venues, then organizers, then events, each in
// ID order); then it maps the images the posts kept link to (an image
// only a refused post linked is not imported: a refused record leaves
// nothing behind).
func (r *importRun) claimIDs() {
	postIDs := map[int64]string{}
	claim := func(kind string, id int64) bool {
		if other, ok := postIDs[id]; ok && other != kind {
			r.fail(kind, id, fieldErr("id", "the source also has a %s with this ID", other))
			return false
		}
		postIDs[id] = kind
		return true
	}
	for _, kind := range []string{KindVenue, KindOrganizer, KindEvent} {
		for _, id := range sortedKeys(r.recs[kind]) {
			if !claim(kind, id) {
				delete(r.recs[kind], id)
			}
		}
	}
	linked := r.linkedImages()
	for _, id := range sortedKeys(r.m.images) {
		img := r.m.images[id]
		if !linked[id] {
			continue
		}
		if !claim(KindImage, id) {
			continue
		}
		p, err := r.m.image(img)
		if err != nil {
			r.fail(KindImage, id, err)
			continue
		}
		r.recs[KindImage][id] = &record{kind: KindImage, id: id, post: p}
	}
}

// resolveLinks keeps the links to records this import has (a link to a
// record the source did not give, or that failed, is dropped with a
// warning), orders categories parents first and bounds link counts as
// the API does.
func (r *importRun) resolveLinks() {
	cats := r.recs[KindCategory]
	for _, id := range sortedKeys(cats) {
		rec := cats[id]
		if p := rec.term.Parent; p != 0 && cats[p] == nil {
			r.rep.warnf("category %d: its parent %d is not imported; imported as a top-level category", id, p)
			rec.term.Parent = 0
		}
	}
	for _, id := range sortedKeys(cats) {
		rec := cats[id]
		depth, p := 0, rec.term.Parent
		for p != 0 && depth <= len(cats) {
			depth++
			p = cats[p].term.Parent
		}
		if depth > len(cats) {
			r.fail(KindCategory, id, fieldErr("parent", "the parents form a cycle"))
			delete(cats, id)
			continue
		}
		rec.depth = depth
	}
	keep := func(kind string, id int64, field string, ids []int64, target string, max int) ([]int64, error) {
		out := []int64{}
		for _, t := range ids {
			switch {
			case slices.Contains(out, t):
			case r.recs[target][t] == nil:
				r.rep.warnf("%s %d: %s %d is not imported (the source did not give it, or it failed); link dropped", kind, id, field, t)
			default:
				out = append(out, t)
			}
		}
		if len(out) > max {
			return nil, fieldErr(field, "%d links; this service accepts at most %d", len(out), max)
		}
		return out, nil
	}
	for _, kind := range []string{KindVenue, KindOrganizer, KindEvent} {
		for _, id := range sortedKeys(r.recs[kind]) {
			p := r.recs[kind][id].post
			if p.ImageID != 0 && r.recs[KindImage][p.ImageID] == nil {
				r.rep.warnf("%s %d: image %d is not imported; link dropped", kind, id, p.ImageID)
				p.ImageID = 0
			}
			e := p.Event
			if e == nil {
				continue
			}
			var err error
			for _, l := range []struct {
				field, target string
				ids           *[]int64
				max           int
			}{
				{"categories", KindCategory, &e.Categories, limits.MaxTermsPerField},
				{"tags", KindTag, &e.Tags, limits.MaxTermsPerField},
				{"venue", KindVenue, &e.Venues, limits.MaxLinksPerEvent},
				{"organizer", KindOrganizer, &e.Organizers, limits.MaxLinksPerEvent},
			} {
				if err == nil {
					*l.ids, err = keep(kind, id, l.field, *l.ids, l.target, l.max)
				}
			}
			if err != nil {
				r.fail(kind, id, err)
				delete(r.recs[kind], id)
			}
		}
	}
	linked := r.linkedImages()
	for id := range r.recs[KindImage] {
		if !linked[id] {
			delete(r.recs[KindImage], id) // only a refused event linked it
		}
	}
}

// linkedImages returns the IDs of the images the mapped venues,
// organizers and events link to.
func (r *importRun) linkedImages() map[int64]bool {
	out := map[int64]bool{}
	for _, kind := range []string{KindVenue, KindOrganizer, KindEvent} {
		for _, rec := range r.recs[kind] {
			if rec.post.ImageID != 0 {
				out[rec.post.ImageID] = true
			}
		}
	}
	return out
}

// stamp sets every record's Origin, with the hash of the record as it
// will be stored.
func (r *importRun) stamp() error {
	for _, kind := range kinds {
		for _, rec := range r.recs[kind] {
			var err error
			if rec.term != nil {
				rec.term.Origin = nil
				rec.term.Origin, err = r.m.origin(rec.id, time.Time{}, rec.term)
			} else {
				rec.post.Origin = nil
				rec.post.Origin, err = r.m.origin(rec.id, rec.post.Modified, rec.post)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// classify compares every record with the store: new, changed at the
// source, unchanged, or colliding with another record under its ID. It
// also reports the records that disappeared from the source.
func (r *importRun) classify(ctx context.Context) error {
	var collisions []Collision
	for _, kind := range kinds {
		ids := sortedKeys(r.recs[kind])
		for start := 0; start < len(ids); start += lookupBatch {
			batch := ids[start:min(start+lookupBatch, len(ids))]
			var here map[int64]existing
			var err error
			if kind == KindCategory || kind == KindTag {
				here, err = r.existingTerms(ctx, batch)
			} else {
				here, err = r.existingPosts(ctx, batch)
			}
			if err != nil {
				return err
			}
			for _, id := range batch {
				rec := r.recs[kind][id]
				cur, ok := here[id]
				want := rec.origin()
				switch {
				case !ok:
					rec.action = actCreate
					r.rep.kind(kind).Created++
				case cur.kind != kind || !cur.origin.SameSource(want):
					collisions = append(collisions, Collision{Kind: kind, ID: id, Here: cur.describe()})
				case cur.origin.Hash == want.Hash:
					r.rep.kind(kind).Unchanged++
				default:
					rec.action = actUpdate
					r.rep.kind(kind).Updated++
				}
			}
		}
	}
	if len(collisions) > 0 {
		r.rep.Collisions = collisions
		for _, kind := range kinds {
			kr := r.rep.kind(kind)
			kr.Created, kr.Updated, kr.Unchanged = 0, 0, 0
		}
		return &CollisionError{Collisions: collisions}
	}
	if n := r.rep.kind(KindCategory).Created + r.rep.kind(KindTag).Created; n > r.caps.NewTerms {
		return &CapError{Cap: CapNewTerms, Limit: int64(r.caps.NewTerms), Where: fmt.Sprintf("the %d categories and tags to create", n)}
	}
	for _, kind := range kinds {
		kr := r.rep.kind(kind)
		for _, id := range sortedKeys(r.own[kind]) {
			if r.recs[kind][id] == nil && !r.listed[kind][id] && !r.unseen[kind][id] && !r.failedIDs[kind][id] {
				if kind == KindImage && r.m.images[id] != nil {
					continue
				}
				kr.Disappeared = append(kr.Disappeared, id)
			}
		}
	}
	for id := range r.protected {
		if r.opened[id] {
			continue
		}
		if r.recs[KindEvent][id] != nil || r.unseen[KindEvent][id] {
			r.rep.Protected = append(r.rep.Protected, id)
		}
	}
	slices.Sort(r.rep.Protected)
	return nil
}

// existing is what classify needs of a stored record.
type existing struct {
	kind   string
	title  string
	origin *repository.Origin
}

func (e existing) describe() string {
	from := "created in this service"
	if e.origin != nil {
		from = fmt.Sprintf("imported from %s (record %d there)", e.origin.Site, e.origin.ID)
	}
	return fmt.Sprintf("a %s %s, %s", e.kind, shown(e.title), from)
}

func (r *importRun) existingPosts(ctx context.Context, ids []int64) (map[int64]existing, error) {
	ps, err := r.store.GetRecords(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read the store: %w", err)
	}
	out := make(map[int64]existing, len(ps))
	for id, p := range ps {
		out[id] = existing{kind: string(p.Kind), title: p.Title.Get(r.m.lang, r.m.lang), origin: p.Origin}
	}
	return out, nil
}

func (r *importRun) existingTerms(ctx context.Context, ids []int64) (map[int64]existing, error) {
	ts, err := r.store.GetLabels(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read the store: %w", err)
	}
	out := make(map[int64]existing, len(ts))
	for id, t := range ts {
		out[id] = existing{kind: string(t.Taxonomy), title: t.Name.Get(r.m.lang, r.m.lang), origin: t.Origin}
	}
	return out, nil
}

// origin returns the record's Origin.
func (rec *record) origin() *repository.Origin {
	if rec.term != nil {
		return rec.term.Origin
	}
	return rec.post.Origin
}
