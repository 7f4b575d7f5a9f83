// Package archcheck holds the test that keeps docs/ARCHITECTURE.md true:
// every package of the module has a row in its layer table, and every
// import of one of our packages points to a lower layer (formats/ packages
// may import each other, sessions/ its own subpackages). It has no code.
package archcheck
