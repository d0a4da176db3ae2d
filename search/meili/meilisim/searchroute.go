package meilisim

// The search route over one index.

import (
	"net/http"
)

// Search answers POST /indexes/{uid}/search.
func (f *Server) Search(w http.ResponseWriter, r *http.Request) {
	uid, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	body, _ := bodyOf(r).(map[string]any)
	var all []map[string]any
	switch {
	case f.Hits != nil:
		all = f.Hits(uid, body)
	case f.Emulate:
		f.Mu.Lock()
		found, err := f.EmulateSearch(f.Indexes[uid], body)
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
			return
		}
		all = found
	}
	forFacets := all
	if f.Emulate {
		f.Mu.Lock()
		var err *APIError
		all, forFacets, err = emulateDistinct(f.Indexes[uid], body, all)
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
			return
		}
	}
	num := func(key string, def int) int {
		if v, ok := body[key].(float64); ok {
			return int(v)
		}
		return def
	}
	q, _ := body["q"].(string)
	answer := map[string]any{"query": q, "processingTimeMs": 1}
	var offset, limit int
	if _, hasPage := body["page"]; hasPage || body["hitsPerPage"] != nil {
		perPage, page := num("hitsPerPage", 20), num("page", 1)
		offset, limit = perPage*(page-1), perPage
		if page == 0 {
			offset, limit = 0, 0
		}
		totalPages := 0
		if perPage > 0 {
			totalPages = (len(all) + perPage - 1) / perPage
		}
		answer["hitsPerPage"], answer["page"], answer["totalPages"], answer["totalHits"] = perPage, page, totalPages, len(all)
	} else {
		offset, limit = num("offset", 0), num("limit", 20)
		answer["offset"], answer["limit"], answer["estimatedTotalHits"] = offset, limit, len(all)
	}
	hits := []map[string]any{}
	for i := offset; i < len(all) && i < offset+limit; i++ {
		hits = append(hits, project(all[i], body["attributesToRetrieve"]))
	}
	answer["hits"] = hits
	f.Mu.Lock()
	f.Served += len(hits)
	f.Mu.Unlock()
	if f.Emulate {
		f.Mu.Lock()
		dist, err := emulateFacets(f.Indexes[uid], body, forFacets)
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
			return
		}
		if dist != nil {
			answer["facetDistribution"] = dist
		}
	}
	f.Reply(w, 200, answer)
}

// project keeps the attributes a search asked for.
func project(doc map[string]any, attrs any) map[string]any {
	list, ok := attrs.([]any)
	if !ok {
		return doc
	}
	out := map[string]any{}
	for _, a := range list {
		if v, ok := doc[a.(string)]; ok {
			out[a.(string)] = v
		}
	}
	return out
}
