package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// TestCopiesOfAToolTookThePlacesOfOthers: two servers' write_file (as
// the aggregator advertises them, "{backend}_write_file") both rank above
// a note tool for "write file"; the second copy goes after the
// note tool, so the first two hits are two different tools, and a search
// for more still returns the copy.
func TestCopiesOfAToolTookThePlacesOfOthers(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "fs_write_file", Name: "fs_write_file", Description: "Write a file.", Backend: "fs"},
		{Key: "desk_write_file", Name: "desk_write_file", Description: "Write a file.", Backend: "desk"},
		{Key: "notes_write_note", Name: "notes_write_note", Description: "Write a note.", Backend: "notes"},
		{Key: "other_read", Name: "other_read", Description: "Read a page.", Backend: "other"},
	}
	ix := toolsearch.Build(docs)
	if got := keys(ix.Search("write file", 2, nil)); !slices.Equal(got, []string{"fs_write_file", "notes_write_note"}) {
		t.Errorf("Search(limit 2) = %v, want [fs_write_file notes_write_note]", got)
	}
	if got := keys(ix.Search("write file", 3, nil)); !slices.Equal(got, []string{"fs_write_file", "notes_write_note", "desk_write_file"}) {
		t.Errorf("Search(limit 3) = %v, want the copy last", got)
	}
}
