package io.strata.client;

/**
 * One page of the client's page cache: page {@code index} (bytes {@code index * pageSize} on) of the file
 * {@code fileId} created (or loaded from its UFS) at {@code creationTimeMs} by the master's clock, as it was when it
 * had {@code fileLength} bytes and was last modified at {@code modificationTimeMs}. A file deleted and written again
 * gets another id (and usually another length and time), so its pages never match the old file's; the creation
 * time tells apart files of the same id in two clusters, or in one formatted again, which a page cache directory
 * may have served one after the other. Immutable.
 */
record PageKey(long fileId, long creationTimeMs, long fileLength, long modificationTimeMs, long index) {
  static final String SUFFIX = ".page";

  /** The page file's name: {@code <fileId>_<creationTimeMs>_<fileLength>_<modificationTimeMs>_<index>.page}. */
  String fileName() {
    return fileId + "_" + creationTimeMs + "_" + fileLength + "_" + modificationTimeMs + "_" + index + SUFFIX;
  }

  /** Whether a name is a page file's of an earlier layout (four numbers, without the creation time). */
  static boolean isOldLayout(String name) {
    return name.matches("-?[0-9]+_-?[0-9]+_-?[0-9]+_-?[0-9]+\\" + SUFFIX);
  }

  /** The key a page file's name stands for, or null when the name is not a page file's. */
  static PageKey parse(String name) {
    if (!name.endsWith(SUFFIX)) {
      return null;
    }
    String[] parts = name.substring(0, name.length() - SUFFIX.length()).split("_", -1);
    if (parts.length != 5) {
      return null;
    }
    try {
      PageKey k = new PageKey(Long.parseLong(parts[0]), Long.parseLong(parts[1]), Long.parseLong(parts[2]),
          Long.parseLong(parts[3]), Long.parseLong(parts[4]));
      return k.fileLength >= 0 && k.index >= 0 && k.fileName().equals(name) ? k : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
