"""Property schemas and their constraints, shared by ``template``
(parameters) and ``resources`` (properties, attributes): below both, so
neither imports the other for them."""
