package io.strata.server.ufs;

/**
 * What an under file system says of one path. {@code contentTag}: a fingerprint of the file's bytes where the file
 * system offers one (an object store's ETag, through Hadoop's {@code EtagSource}: S3A, ABFS), which changes whenever the
 * bytes do, also at the same length and whatever the mtime; "" where it offers none (a local dir, HDFS), where only
 * the length and, on a file system, the mtime tell a change. Immutable.
 */
public record UfsStatus(String name, boolean directory, long length, long modificationTimeMs, int mode,
    String owner, String group, String contentTag) {
  public UfsStatus {
    contentTag = contentTag == null ? "" : contentTag;
  }

  /** A status with no content fingerprint. */
  public UfsStatus(String name, boolean directory, long length, long modificationTimeMs, int mode, String owner,
      String group) {
    this(name, directory, length, modificationTimeMs, mode, owner, group, "");
  }

  /**
   * True when a file recorded with fingerprint {@code recorded} now has fingerprint {@code now} and they differ: its
   * bytes changed. False when either is "" (unknown: the length and mtime decide) or both are the same.
   */
  public static boolean contentTagsDiffer(String recorded, String now) {
    return recorded != null && now != null && !recorded.isEmpty() && !now.isEmpty() && !recorded.equals(now);
  }
}
