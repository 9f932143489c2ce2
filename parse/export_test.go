package parse

// HostileShapes lets the benchmarks of package parse_test read the shapes
// TestMarkdownWorkIsLinear counts.
var HostileShapes = markdownHostileShapes
