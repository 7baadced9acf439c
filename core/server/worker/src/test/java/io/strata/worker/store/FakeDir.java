package io.strata.worker.store;

/** An immutable {@link DirView} for policy tests. */
record FakeDir(
    int tierOrdinal, String tierAlias, int dirIndex, String path, long capacityBytes, long usedBytes,
    boolean isGood) implements DirView {

  /** A good dir of tier 0 (MEM) with {@code free} bytes available out of 1000. */
  static FakeDir free(int dirIndex, long free) {
    return onTier(0, dirIndex, free);
  }

  static FakeDir onTier(int tierOrdinal, int dirIndex, long free) {
    String alias = tierOrdinal == 0 ? "MEM" : "SSD";
    return new FakeDir(tierOrdinal, alias, dirIndex, "/" + alias + "/" + dirIndex, 1000, 1000 - free, true);
  }

  FakeDir bad() {
    return new FakeDir(tierOrdinal, tierAlias, dirIndex, path, capacityBytes, usedBytes, false);
  }
}
