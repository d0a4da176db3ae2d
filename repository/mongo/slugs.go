package mongo

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/calendar/eventcal/repository"
)

// maxSlugCandidates bounds the search for a free slug (base, base-2, ...).
const maxSlugCandidates = 100_000

// slugSpace is where slugs must be unique: one post kind or one taxonomy.
//
// A slug is reserved by inserting a document into the slugs collection whose
// _id is "<scope>:<group>:<lang>:<slug>" ("post:event:en:my-slug"), owned by
// the item's ID: the unique _id makes two concurrent reservations of one slug
// impossible on MongoDB and on FerretDB alike. Every reservation is made and
// released by a writer holding the owner's item lock, so an item's writes
// never race on its own reservations.
//
// A reservation can outlive its use when a process dies between reserving
// and writing (or between writing and releasing the old slug). Such a
// leftover is taken over by the next item that wants the slug, once the
// owner's lock is free and the owner's document does not use the slug. A
// reservation younger than lockLease is never questioned: its writer may
// still hold the lock (and a dead writer's lock lasts that long anyway),
// which keeps collisions between concurrent writers cheap.
type slugSpace struct {
	scope repository.MarkKind // "post" or "term": also the lock and mark namespace
	group string              // the post kind or taxonomy
	items *mongo.Collection   // posts or terms
	field string              // "kind" or "taxonomy": where items keep group
}

// slugTable reserves, looks up and releases slugs (the slugs collection).
type slugTable struct{ *conn }

// postSlugs returns the slug space of posts of kind.
func (s *slugTable) postSlugs(kind repository.Kind) slugSpace {
	return slugSpace{scope: repository.MarkPost, group: string(kind), items: s.posts, field: "kind"}
}

// termSlugs returns the slug space of terms of tax.
func (s *slugTable) termSlugs(tax repository.LabelKind) slugSpace {
	return slugSpace{scope: repository.MarkTerm, group: string(tax), items: s.terms, field: "taxonomy"}
}

// key returns the reservation _id of slug in lang.
func (sp slugSpace) key(lang, slug string) string {
	return string(sp.scope) + ":" + sp.group + ":" + lang + ":" + slug
}

// slugDoc is a reservation in the slugs collection.
type slugDoc struct {
	Key   string    `bson:"_id"`
	Scope string    `bson:"scope"`
	Group string    `bson:"group"`
	Lang  string    `bson:"lang"`
	Slug  string    `bson:"slug"`
	Owner int64     `bson:"owner"`
	At    time.Time `bson:"at"`
}

// claimSlugs makes every slug in slugs unique in sp for the item owner,
// whose stored slugs are old (nil for a new item), by reserving the first
// free candidate (repository.SlugCandidate) per language. It rewrites slugs
// in place and returns the reservations it inserted, which the caller
// releases when its write fails. A reservation owner held before the call
// is used but never returned: it may be one the stored record relies on,
// and a failed write must not release it. The caller holds the owner's
// item lock.
func (s *slugTable) claimSlugs(ctx context.Context, sp slugSpace, owner int64, old, slugs repository.Text) ([]string, error) {
	var added []string
	for _, lang := range slices.Sorted(maps.Keys(slugs)) {
		base := slugs[lang]
		if base == "" || base == old[lang] {
			continue // nothing to reserve, or already ours
		}
		if !validFieldName(lang) {
			s.releaseSlugKeys(ctx, owner, added)
			return nil, fmt.Errorf("mongo: invalid slug language %q", lang)
		}
		// The requested slug is usually free: try it before listing the
		// taken candidates (a regex scan on FerretDB).
		var used map[string]bool
		found := false
		for n := 1; n <= maxSlugCandidates && !found; n++ {
			cand := repository.SlugCandidate(base, n)
			if n == 2 {
				var err error
				if used, err = s.slugsInUse(ctx, sp, lang, base, owner); err != nil {
					s.releaseSlugKeys(ctx, owner, added)
					return nil, err
				}
			}
			switch {
			case cand == old[lang]:
				found = true // our own slug is the first free candidate
			case used[cand]:
				continue
			default:
				ok, inserted, err := s.reserveSlug(ctx, sp, lang, cand, owner)
				if err != nil {
					s.releaseSlugKeys(ctx, owner, added)
					return nil, err
				}
				if inserted {
					added = append(added, sp.key(lang, cand))
				}
				found = ok
			}
			if found {
				slugs[lang] = cand
			}
		}
		if !found {
			s.releaseSlugKeys(ctx, owner, added)
			return nil, fmt.Errorf("mongo: no free slug for %q after %d candidates", base, maxSlugCandidates)
		}
	}
	return added, nil
}

// slugsInUse returns the candidates of base (base, base-2, ...) that other
// items hold and use. It saves a failed insert per taken candidate when many
// items share a title; reserveSlug stays the authority.
func (s *slugTable) slugsInUse(ctx context.Context, sp slugSpace, lang, base string, owner int64) (map[string]bool, error) {
	pattern := "^" + regexp.QuoteMeta(sp.key(lang, base)) + `(-[0-9]+)?\z`
	cur, err := s.slugs.Find(ctx, bson.D{{Key: "_id", Value: bson.Regex{Pattern: pattern}}})
	if err != nil {
		return nil, fmt.Errorf("mongo: list slugs %q: %w", base, err)
	}
	var docs []slugDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("mongo: list slugs %q: %w", base, err)
	}
	if len(docs) == 0 {
		return nil, nil
	}
	used := make(map[string]bool, len(docs))
	var owners []int64
	for _, d := range docs {
		switch {
		case d.Owner == owner:
		case s.recent(ctx, d.At):
			used[d.Slug] = true
		default:
			owners = append(owners, d.Owner)
		}
	}
	slugsOf, err := s.ownerSlugs(ctx, sp, lang, owners)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if d.Owner != owner && !s.recent(ctx, d.At) && slugsOf[d.Owner] == d.Slug {
			used[d.Slug] = true
		}
	}
	return used, nil
}

// ownerSlugs returns the stored slug in lang of each of the items ids that
// exists in sp's group.
func (s *slugTable) ownerSlugs(ctx context.Context, sp slugSpace, lang string, ids []int64) (map[int64]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// By ID only (look-ups on FerretDB); the group is checked here.
	raws, err := s.findByIDs(ctx, sp.items, uniqueIDs(ids),
		bson.D{{Key: fieldID, Value: 1}, {Key: sp.field, Value: 1}, {Key: "slug", Value: 1}})
	if err != nil {
		return nil, fmt.Errorf("mongo: read slug owners: %w", err)
	}
	out := make(map[int64]string, len(raws))
	for _, raw := range raws {
		var d struct {
			ID   int64           `bson:"_id"`
			Slug repository.Text `bson:"slug"`
		}
		if err := decodeItem(raw, &d); err != nil {
			return nil, fmt.Errorf("mongo: read slug owners: %w", err)
		}
		if group, _ := raw.Lookup(sp.field).StringValueOK(); group == sp.group {
			out[d.ID] = d.Slug[lang]
		}
	}
	return out, nil
}

// reserveSlug reserves slug in lang for owner. It returns false when another
// item holds the slug. A reservation owner made earlier counts as reserved
// now (a leftover of one of its own failed writes, or one its stored record
// uses); inserted reports whether this call made the reservation, which
// only then is the caller's to release.
func (s *slugTable) reserveSlug(ctx context.Context, sp slugSpace, lang, slug string, owner int64) (ok, inserted bool, err error) {
	key := sp.key(lang, slug)
	for range 5 {
		at := s.dbNow(ctx).UTC().Truncate(time.Millisecond)
		_, err := s.slugs.InsertOne(ctx, slugDoc{
			Key: key, Scope: string(sp.scope), Group: sp.group, Lang: lang, Slug: slug, Owner: owner, At: at,
		})
		if err == nil {
			return true, true, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			// The insert may have landed although it failed (a lost
			// reply): a reservation of owner made at this very time is
			// this one, and the caller's to release.
			var cur slugDoc
			cctx, cancel := s.cleanupContext(ctx)
			rerr := s.slugs.FindOne(cctx, bson.D{{Key: "_id", Value: key}}).Decode(&cur)
			cancel()
			if rerr == nil && cur.Owner == owner && cur.At.Equal(at) {
				return true, true, nil
			}
			return false, false, fmt.Errorf("mongo: reserve slug %s: %w", key, err)
		}
		var cur slugDoc
		err = s.slugs.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&cur)
		switch {
		case isNoDocuments(err):
			continue // released meanwhile
		case err != nil:
			return false, false, fmt.Errorf("mongo: reserve slug %s: %w", key, err)
		case cur.Owner == owner:
			return true, false, nil
		case s.recent(ctx, cur.At):
			return false, false, nil
		}
		retry, err := s.takeOverSlug(ctx, sp, lang, slug, cur.Owner)
		if err != nil || !retry {
			return false, false, err
		}
	}
	return false, false, nil
}

// takeOverSlug removes the reservation of slug by holder when it is a
// leftover: holder's lock is free and holder's document does not use the
// slug. It returns true when the reservation is gone (the caller then tries
// to insert its own).
func (s *slugTable) takeOverSlug(ctx context.Context, sp slugSpace, lang, slug string, holder int64) (bool, error) {
	inUse := func() (bool, error) {
		slugsOf, err := s.ownerSlugs(ctx, sp, lang, []int64{holder})
		return slugsOf[holder] == slug, err
	}
	// Cheap check first: the common case is a slug in use.
	if used, err := inUse(); err != nil || used {
		return false, err
	}
	l, err := s.tryLock(ctx, itemKey(sp.scope, holder))
	if err != nil || l == nil {
		return false, err // holder is being written: its slug is in flight
	}
	defer s.unlock(ctx, l)
	if used, err := inUse(); err != nil || used {
		return false, err
	}
	if _, err := s.slugs.DeleteOne(ctx, bson.D{{Key: "_id", Value: sp.key(lang, slug)}, {Key: "owner", Value: holder}}); err != nil {
		return false, fmt.Errorf("mongo: take over slug %s: %w", sp.key(lang, slug), err)
	}
	return true, nil
}

// recent reports whether a reservation made at (the server's clock) is too
// young to be a leftover.
func (s *slugTable) recent(ctx context.Context, at time.Time) bool {
	return s.dbNow(ctx).Sub(at) < lockLease
}

// releaseOldSlugs removes owner's reservations of the slugs in old that
// slugs no longer uses, once a write changing them landed. Best effort: a
// leftover is taken over later.
func (s *slugTable) releaseOldSlugs(ctx context.Context, sp slugSpace, owner int64, old, slugs repository.Text) {
	var keys []string
	for lang, slug := range old {
		if slug != "" && slugs[lang] != slug {
			keys = append(keys, sp.key(lang, slug))
		}
	}
	s.releaseSlugKeys(ctx, owner, keys)
}

// releaseSlugKeys removes owner's reservations with these keys. Best effort.
func (s *slugTable) releaseSlugKeys(ctx context.Context, owner int64, keys []string) {
	if len(keys) == 0 {
		return
	}
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	s.slugs.DeleteMany(cctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}, {Key: "owner", Value: owner}})
}

// releaseAllSlugs removes every reservation of owner in scope (after the
// owner was deleted). Best effort.
func (s *slugTable) releaseAllSlugs(ctx context.Context, scope repository.MarkKind, owner int64) {
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	s.slugs.DeleteMany(cctx, bson.D{{Key: "scope", Value: string(scope)}, {Key: "owner", Value: owner}})
}

// slugOwner returns the ID of the item of sp that uses slug in lang.
func (s *slugTable) slugOwner(ctx context.Context, sp slugSpace, lang, slug string) (int64, error) {
	if slug == "" || !validFieldName(lang) {
		return 0, repository.ErrNotFound
	}
	var doc slugDoc
	err := s.slugs.FindOne(ctx, bson.D{{Key: "_id", Value: sp.key(lang, slug)}}).Decode(&doc)
	switch {
	case isNoDocuments(err):
		return 0, repository.ErrNotFound
	case err != nil:
		return 0, fmt.Errorf("mongo: look up slug %s: %w", sp.key(lang, slug), err)
	}
	return doc.Owner, nil
}
