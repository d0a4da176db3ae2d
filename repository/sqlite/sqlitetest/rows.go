package sqlitetest

import (
	"database/sql"
	"testing"
)

// Rows returns the column names of table in db and every row's values,
// in the order SQLite reads them (TEXT and BLOB values as strings); t
// fails if the table cannot be read. Tests compare whole stores with it.
func Rows(t testing.TB, db *sql.DB, table string) (cols []string, rows [][]any) {
	t.Helper()
	rs, err := db.Query(`SELECT * FROM "` + table + `"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if cols, err = rs.Columns(); err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				vals[i] = string(bs)
			}
		}
		rows = append(rows, vals)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, rows
}
