import MLGraph
