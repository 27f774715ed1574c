//go:build !unix

package load

// canRead reports whether fp (a path in the tree) can be opened for
// reading, by opening it.
func (c *chartReader) canRead(fp string, ownRoot bool) bool {
	open := c.open
	if !ownRoot {
		open = c.l.open
	}
	f, err := open(fp)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
