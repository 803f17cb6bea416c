package pagination

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type item struct {
	Key string
	ID  int
}

func itemKey(it item) string { return it.Key }

var testKey = []byte("0123456789abcdef0123456789abcdef")

func newTestCodec() *Codec { return NewCodec(testKey) }

// makeItems builds n sorted items with unique IDs; runs maps a start index to
// the length of a run of equal keys beginning there.
func makeItems(n int, runs map[int]int) []item {
	items := make([]item, 0, n)
	g := 0
	for i := 0; i < n; {
		l := max(runs[i], 1)
		for j := 0; j < l && i < n; j++ {
			items = append(items, item{Key: fmt.Sprintf("k%06d", g), ID: i})
			i++
		}
		g++
	}
	return items
}

// walk pages through items (re-read via list before every page) and returns
// every delivered item and the page lengths. It fails the test on errors.
func walk(t *testing.T, c *Codec, list func(page int) []item, size int) (got []item, pages []int) {
	t.Helper()
	cursor := ""
	for p := 0; ; p++ {
		require.Less(t, p, 10000, "walk does not terminate")
		page, next, err := Page(c, list(p), itemKey, "tools/list", "", cursor, size)
		require.NoError(t, err)
		got = append(got, page...)
		pages = append(pages, len(page))
		if next == "" {
			return got, pages
		}
		require.NotEmpty(t, page, "non-last page is empty")
		cursor = next
	}
}

func assertExactlyOnce(t *testing.T, want, got []item) {
	t.Helper()
	seen := map[int]int{}
	for _, it := range got {
		seen[it.ID]++
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "item %d delivered %d times", id, n)
	}
	assert.Len(t, got, len(want))
	assert.Equal(t, want, got, "items out of order or missing")
}

func TestPageWalkStraddlingRuns(t *testing.T) {
	c := newTestCodec()
	cases := []struct {
		n     int
		runs  map[int]int
		pages []int
	}{
		{1100, map[int]int{995: 10}, []int{1000, 100}},
		{1001, map[int]int{996: 5}, []int{1000, 1}},
		{1001, map[int]int{990: 11}, []int{1000, 1}}, // run ends the list
		{2000, map[int]int{995: 10, 1998: 2}, []int{1000, 1000}},
		{1000, map[int]int{0: 1000}, []int{1000}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.n, tc.runs), func(t *testing.T) {
			items := makeItems(tc.n, tc.runs)
			got, pages := walk(t, c, func(int) []item { return items }, 1000)
			assertExactlyOnce(t, items, got)
			assert.Equal(t, tc.pages, pages)
		})
	}
}

func TestPageSmallPages(t *testing.T) {
	c := newTestCodec()
	items := makeItems(100, map[int]int{5: 3, 12: 4, 40: 9})
	got, pages := walk(t, c, func(int) []item { return items }, 7)
	assertExactlyOnce(t, items, got)
	assert.Len(t, pages, 15)
	assert.Equal(t, 2, pages[len(pages)-1])
}

func TestPageRunLongerThanPage(t *testing.T) {
	c := newTestCodec()
	items := makeItems(40, map[int]int{3: 25})
	got, pages := walk(t, c, func(int) []item { return items }, 7)
	assertExactlyOnce(t, items, got)
	assert.Equal(t, []int{7, 7, 7, 7, 7, 5}, pages)

	// The run of 25 spans four pages; Delivered counts across all of them.
	_, next, err := Page(c, items, itemKey, "tools/list", "", "", 7)
	require.NoError(t, err)
	for _, want := range []int{4, 11, 18, 25} {
		cur, err := c.Decode(next, "tools/list", "")
		require.NoError(t, err)
		assert.Equal(t, Cursor{Verb: "tools/list", LastKey: items[3].Key, Delivered: want}, cur)
		_, next, err = Page(c, items, itemKey, "tools/list", "", next, 7)
		require.NoError(t, err)
	}
}

func TestPageWholeListFits(t *testing.T) {
	c := newTestCodec()
	items := makeItems(5, nil)
	for _, size := range []int{0, -1, 5, 6, 1000} {
		page, next, err := Page(c, items, itemKey, "tools/list", "", "", size)
		require.NoError(t, err)
		assert.Equal(t, items, page)
		assert.Equal(t, "", next, "last page must omit nextCursor")
	}
	page, next, err := Page(c, []item(nil), itemKey, "tools/list", "", "", 10)
	require.NoError(t, err)
	assert.NotNil(t, page)
	assert.Empty(t, page)
	assert.Equal(t, "", next)
}

func TestPageLastKeyRemoved(t *testing.T) {
	c := newTestCodec()
	items := makeItems(10, nil)
	page, next, err := Page(c, items, itemKey, "tools/list", "", "", 3)
	require.NoError(t, err)
	require.Equal(t, items[:3], page)

	shrunk := slices.Delete(slices.Clone(items), 2, 3) // drop the cursor's key
	page, _, err = Page(c, shrunk, itemKey, "tools/list", "", next, 3)
	require.NoError(t, err)
	assert.Equal(t, items[3:6], page, "resumes at the next key")
}

func TestPageRunShrunkBetweenPages(t *testing.T) {
	c := newTestCodec()
	items := makeItems(12, map[int]int{2: 5}) // run at 2..6
	page, next, err := Page(c, items, itemKey, "tools/list", "", "", 5)
	require.NoError(t, err)
	require.Equal(t, items[:5], page) // 3 of the run delivered

	// Run shrinks to 2 items: the whole run is skipped.
	shrunk := slices.Delete(slices.Clone(items), 4, 7)
	page, _, err = Page(c, shrunk, itemKey, "tools/list", "", next, 5)
	require.NoError(t, err)
	assert.Equal(t, items[7:12], page)

	// Run shrinks to 4 items (one removed at its end): resume at the 4th.
	shrunk = slices.Delete(slices.Clone(items), 6, 7)
	page, _, err = Page(c, shrunk, itemKey, "tools/list", "", next, 5)
	require.NoError(t, err)
	assert.Equal(t, append([]item{items[5]}, items[7:11]...), page)
}

func TestPageInsertBeforeCursor(t *testing.T) {
	c := newTestCodec()
	items := makeItems(20, map[int]int{4: 3})
	var inserted bool
	list := func(p int) []item {
		if p == 0 {
			return items
		}
		if !inserted { // an item sorting before the cursor appears after page 1
			inserted = true
			items = slices.Insert(items, 1, item{Key: items[0].Key + "a", ID: 999})
		}
		return items
	}
	got, _ := walk(t, c, list, 5)
	want := slices.DeleteFunc(slices.Clone(items), func(it item) bool { return it.ID == 999 })
	assertExactlyOnce(t, want, got)
}

func TestPageInsertAfterCursor(t *testing.T) {
	c := newTestCodec()
	items := makeItems(10, nil)
	page, next, err := Page(c, items, itemKey, "tools/list", "", "", 4)
	require.NoError(t, err)
	require.Equal(t, items[:4], page)

	grown := slices.Insert(slices.Clone(items), 4, item{Key: items[3].Key + "a", ID: 999})
	page, _, err = Page(c, grown, itemKey, "tools/list", "", next, 4)
	require.NoError(t, err)
	assert.Equal(t, grown[4:8], page, "new item after the cursor is delivered")
}

var listVerbs = []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"}

func TestPageCrossVerbCursor(t *testing.T) {
	c := newTestCodec()
	items := makeItems(10, nil)
	n := 0
	for _, from := range listVerbs {
		_, next, err := Page(c, items, itemKey, from, "", "", 3)
		require.NoError(t, err)
		require.NotEmpty(t, next)
		_, _, err = Page(c, items, itemKey, from, "", next, 3)
		require.NoError(t, err, "same verb")
		for _, to := range listVerbs {
			if to == from {
				continue
			}
			n++
			page, nn, err := Page(c, items, itemKey, to, "", next, 3)
			require.ErrorIs(t, err, ErrInvalidCursor, "%s cursor on %s", from, to)
			assert.Contains(t, err.Error(), fmt.Sprintf("cursor belongs to %s, not %s", from, to))
			assert.Nil(t, page)
			assert.Empty(t, nn)
		}
	}
	assert.Equal(t, 12, n)
}

func TestPageInvalidCursor(t *testing.T) {
	c := newTestCodec()
	items := makeItems(10, nil)
	for _, s := range []string{"!!", "abc=", strings.Repeat("A", 10240)} {
		_, _, err := Page(c, items, itemKey, "tools/list", "", s, 3)
		assert.ErrorIs(t, err, ErrInvalidCursor)
	}
}

func TestPageLongKeys(t *testing.T) {
	c := newTestCodec()
	long := func(i int) string { return fmt.Sprintf("k%06d", i) + strings.Repeat("x", 2000) }
	items := makeItems(30, nil)
	for _, i := range []int{4, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 29} {
		items[i].Key = long(i) // still sorted: "k000004xx..." < "k000005"
	}
	got, pages := walk(t, c, func(int) []item { return items }, 5)
	assertExactlyOnce(t, items, got)
	// Pages end before a long key, else (10..20 all long) grow past them.
	assert.Equal(t, []int{4, 5, 1, 12, 5, 3}, pages)
}

func BenchmarkPage(b *testing.B) {
	c := newTestCodec()
	items := makeItems(1100, map[int]int{995: 10})
	_, next, err := Page(c, items, itemKey, "tools/list", "", "", 1000)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		page, _, err := Page(c, items, itemKey, "tools/list", "", next, 1000)
		if err != nil || len(page) != 100 {
			b.Fatal(len(page), err)
		}
	}
}

// A cursor minted for one principal's view must not page another's: the
// lists differ per principal, and the cursor would leak its position.
func TestPageCursorOfAnotherPrincipalRefused(t *testing.T) {
	c := newTestCodec()
	items := makeItems(10, nil)
	_, next, err := Page(c, items, itemKey, "tools/list", "tagA", "", 3)
	require.NoError(t, err)
	page, _, err := Page(c, items, itemKey, "tools/list", "tagA", next, 3)
	require.NoError(t, err)
	assert.Equal(t, items[3:6], page)
	for _, other := range []string{"tagB", ""} {
		_, _, err = Page(c, items, itemKey, "tools/list", other, next, 3)
		require.ErrorIs(t, err, ErrInvalidCursor)
		assert.Contains(t, err.Error(), "issued to another principal")
	}
	cur, err := c.Decode(next, "tools/list", "tagA")
	require.NoError(t, err)
	assert.Equal(t, "tagA", cur.Owner)
}
