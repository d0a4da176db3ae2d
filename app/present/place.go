package present

import (
	"bytes"
	"strconv"
	"time"

	"github.com/calendar/eventcal/repository"
)

// renderImage is the Image object of a linked image, nil (written false)
// when there is none. Its size (width, height, filesize, sizes) is shown
// where known, on The Events Calendar's root only, as the original shows
// it.
func (rn *Renderer) renderImage(img *repository.Record) *Image {
	if img == nil || img.Image == nil {
		return nil
	}
	im := &Image{URL: img.Image.URL, ID: img.ID, Extension: img.Image.Extension}
	if rn.TECShaped() {
		im.Width, im.Height, im.Filesize, im.Sizes = img.Image.Width, img.Image.Height, img.Image.Filesize, img.Image.Sizes
	}
	return im
}

// PlaceHeader holds the fields venues and organizers share, in the
// original plugin's order (the name field, venue or organizer, comes
// after url).
type PlaceHeader struct {
	ID          int64
	Author      string
	Status      string
	Date        string
	DateUTC     string
	Modified    string
	ModifiedUTC string
	URL         string
	Name        string
	Description string
	Excerpt     string
	Slug        string
	Image       *Image
}

// writeKept writes the header as the original plugin sends it, without
// the empty values it drops (nameKey holds the name).
func (h *PlaceHeader) writeKept(w *objWriter, nameKey string) {
	w.int("id", h.ID)
	w.strKept("author", h.Author)
	w.strKept("status", h.Status)
	w.strKept("date", h.Date)
	w.strKept("date_utc", h.DateUTC)
	w.strKept("modified", h.Modified)
	w.strKept("modified_utc", h.ModifiedUTC)
	w.strKept("url", h.URL)
	w.strKept(nameKey, h.Name)
	w.strKept("description", h.Description)
	w.strKept("excerpt", h.Excerpt)
	w.strKept("slug", h.Slug)
	if h.Image != nil {
		w.typed("image", h.Image)
	}
}

// Venue is the Venue object: empty values are dropped before show_map,
// show_map_link and the global IDs, as the original plugin does. A venue
// from LinkedVenue is shared and written from its kept encoding: it is
// only read (Venue renders one that may be changed).
type Venue struct {
	PlaceHeader
	Address       string
	City          string
	Country       string
	Province      string
	State         string
	Zip           string
	Phone         string
	Website       string
	StateProvince string
	// GeoLat and GeoLng are both set or both nil.
	GeoLat, GeoLng  *float64
	JSONLD          *PlaceLD
	ShowMap         bool
	ShowMapLink     bool
	GlobalID        string
	GlobalIDLineage []string
	Language        string
	Translations    []string
	frozen
}

func (v *Venue) writeJSON(buf *bytes.Buffer) error {
	if v == nil {
		buf.WriteString("null")
		return nil
	}
	if v.enc != nil {
		buf.Write(v.enc)
		return nil
	}
	w := openObj(buf)
	v.writeKept(&w, "venue")
	w.strKept("address", v.Address)
	w.strKept("city", v.City)
	w.strKept("country", v.Country)
	w.strKept("province", v.Province)
	w.strKept("state", v.State)
	w.strKept("zip", v.Zip)
	w.strKept("phone", v.Phone)
	w.strKept("website", v.Website)
	w.strKept("stateprovince", v.StateProvince)
	if v.GeoLat != nil && v.GeoLng != nil {
		w.float("geo_lat", *v.GeoLat)
		w.float("geo_lng", *v.GeoLng)
	}
	if v.JSONLD != nil {
		w.typed("json_ld", v.JSONLD)
	}
	w.bool("show_map", v.ShowMap)
	w.bool("show_map_link", v.ShowMapLink)
	w.str("global_id", v.GlobalID)
	w.strs("global_id_lineage", v.GlobalIDLineage)
	w.str("language", v.Language)
	w.strs("translations", v.Translations)
	return w.close()
}

// MarshalJSON writes the venue.
func (v *Venue) MarshalJSON() ([]byte, error) { return marshal(v) }

// Organizer is the Organizer object (empty values dropped, as the
// original plugin does, all but language and translations). One from
// LinkedOrganizer is shared, as LinkedVenue's venues are.
type Organizer struct {
	PlaceHeader
	Phone           string
	Website         string
	Email           string
	JSONLD          *PersonLD
	GlobalID        string
	GlobalIDLineage []string
	Language        string
	Translations    []string
	frozen
}

func (o *Organizer) writeJSON(buf *bytes.Buffer) error {
	if o == nil {
		buf.WriteString("null")
		return nil
	}
	if o.enc != nil {
		buf.Write(o.enc)
		return nil
	}
	w := openObj(buf)
	o.writeKept(&w, "organizer")
	w.strKept("phone", o.Phone)
	w.strKept("website", o.Website)
	w.strKept("email", o.Email)
	if o.JSONLD != nil {
		w.typed("json_ld", o.JSONLD)
	}
	w.strKept("global_id", o.GlobalID)
	w.strs("global_id_lineage", o.GlobalIDLineage)
	w.str("language", o.Language)
	w.strs("translations", o.Translations)
	return w.close()
}

// MarshalJSON writes the organizer.
func (o *Organizer) MarshalJSON() ([]byte, error) { return marshal(o) }

// placeRenderer shapes venues and organizers, alone and as an event links
// them.
type placeRenderer struct{ *Renderer }

// placeHeader fills the fields venues and organizers share.
func (rn *placeRenderer) placeHeader(p *repository.Record, l *Linked, v View) PlaceHeader {
	def := rn.cfg.DefaultLanguage
	return PlaceHeader{
		ID:          p.ID,
		Author:      strconv.FormatInt(p.Author, 10),
		Status:      p.Status,
		Date:        localDate(p.Date, rn.cfg.Location),
		DateUTC:     localDate(p.Date, time.UTC),
		Modified:    localDate(p.Modified, rn.cfg.Location),
		ModifiedUTC: localDate(p.Modified, time.UTC),
		URL:         rn.permalink(p, v.Lang),
		Name:        p.Title.Get(v.Lang, def, rn.cfg.Languages...),
		Description: p.Content.Get(v.Lang, def, rn.cfg.Languages...),
		Excerpt:     p.Excerpt.Get(v.Lang, def, rn.cfg.Languages...),
		Slug:        p.Slug.Get(v.Lang, def, rn.cfg.Languages...),
		Image:       rn.renderImage(l.posts[p.ImageID]),
	}
}

// Venue renders a venue for v.
func (rn *placeRenderer) Venue(p *repository.Record, l *Linked, v View) *Venue {
	vf := p.Venue
	if vf == nil {
		vf = &repository.VenueFields{}
	}
	gid := rn.globalID(p.ID)
	o := &Venue{
		PlaceHeader: rn.placeHeader(p, l, v),
		Address:     vf.Address, City: vf.City, Country: vf.Country, Province: vf.Province, State: vf.State,
		Zip: vf.Zip, Phone: vf.Phone, Website: vf.Website, StateProvince: vf.StateProvince,
		ShowMap: vf.ShowMap, ShowMapLink: vf.ShowMapLink,
		GlobalID: gid, GlobalIDLineage: []string{gid},
		Language: rn.textLang(p.Title, v.Lang), Translations: rn.translations(p.Title, p.Content, p.Excerpt),
	}
	if vf.GeoLat != nil && vf.GeoLng != nil {
		lat, lng := *vf.GeoLat, *vf.GeoLng
		o.GeoLat, o.GeoLng = &lat, &lng
	}
	if v.Single {
		o.JSONLD = placeJSONLD(o, asIs)
	}
	return o
}

// Organizer renders an organizer for v.
func (rn *placeRenderer) Organizer(p *repository.Record, l *Linked, v View) *Organizer {
	of := p.Organizer
	if of == nil {
		of = &repository.OrganizerFields{}
	}
	gid := rn.globalID(p.ID)
	o := &Organizer{
		PlaceHeader: rn.placeHeader(p, l, v),
		Phone:       of.Phone, Website: of.Website, Email: of.Email,
		GlobalID: gid, GlobalIDLineage: []string{gid},
		Language: rn.textLang(p.Title, v.Lang), Translations: rn.translations(p.Title, p.Content, p.Excerpt),
	}
	if v.Single {
		o.JSONLD = personJSONLD(o, asIs)
	}
	return o
}

// LinkedPlace renders p as a venue (LinkedVenue) or an organizer
// (LinkedOrganizer).
func (rn *placeRenderer) LinkedPlace(p *repository.Record, l *Linked, v View, venue bool) any {
	if venue {
		return rn.LinkedVenue(p, l, v)
	}
	return rn.LinkedOrganizer(p, l, v)
}

// LinkedVenue is Venue reused from the linked-record cache while p and
// its image are the same decoded records (linkcache.go). The value is
// shared: it is only read.
func (rn *placeRenderer) LinkedVenue(p *repository.Record, l *Linked, v View) *Venue {
	k := renderedKey{id: p.ID, lang: v.Lang, single: v.Single, kind: renderedVenue}
	return rendered(&rn.links, k, p, l.posts[p.ImageID], 0, func() *Venue {
		o := rn.Venue(p, l, v)
		o.enc = freezeEnc(o)
		return o
	})
}

// LinkedOrganizer is Organizer reused from the linked-record cache, as
// LinkedVenue.
func (rn *placeRenderer) LinkedOrganizer(p *repository.Record, l *Linked, v View) *Organizer {
	k := renderedKey{id: p.ID, lang: v.Lang, single: v.Single, kind: renderedOrganizer}
	return rendered(&rn.links, k, p, l.posts[p.ImageID], 0, func() *Organizer {
		o := rn.Organizer(p, l, v)
		o.enc = freezeEnc(o)
		return o
	})
}
