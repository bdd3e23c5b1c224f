package chunk

// NextBoundary exposes the boundary finders to the property tests: the
// first boundary of level l after s (s < len(text)), or len(text).
func NextBoundary(text string, l Level, s int) int {
	return newFinder(text).next(l, s)
}

// MetadataOf exposes metadata for the line metadata tests.
func MetadataOf(text string, start, end int) Metadata {
	return metadata(text, start, end, TotalLines(text))
}
