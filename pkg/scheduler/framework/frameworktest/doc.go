// Package frameworktest holds test doubles of the framework's interfaces, for the tests of
// plugins that cannot import the scenario harness (which imports them).
package frameworktest
