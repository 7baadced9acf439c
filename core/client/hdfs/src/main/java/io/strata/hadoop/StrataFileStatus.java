package io.strata.hadoop;

import io.strata.client.URIStatus;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * A Strata status as Hadoop sees it, with an etag ({@link EtagSource}) for files: the inode id, length and
 * modification time. A Strata file's bytes never change once it is closed; new content is a new inode
 * (overwrite deletes and creates, a metadata sync replaces a changed under file system file), so the etag
 * changes with the content, and a rename (same inode, same times) keeps it. Directories have none ("").
 * Immutable.
 */
final class StrataFileStatus extends FileStatus implements EtagSource {
  private static final long serialVersionUID = 1L;
  private final String etag;

  StrataFileStatus(URIStatus s, Path qualified) {
    super(s.directory() ? 0 : s.length(), s.directory(), s.directory() ? 0 : 1, s.directory() ? 0 : s.blockSize(),
        s.modificationTimeMs(), s.accessTimeMs(), new FsPermission((short) (s.mode() & 07777)), s.owner(),
        s.group(), qualified);
    this.etag = etagOf(s);
  }

  static String etagOf(URIStatus s) {
    return s.directory() ? "" : Long.toHexString(s.id()) + "-" + s.length() + "-" + s.modificationTimeMs();
  }

  @Override
  public String getEtag() {
    return etag;
  }

  @Override
  public boolean equals(Object o) {
    return super.equals(o); // a path names a status, as in FileStatus
  }

  @Override
  public int hashCode() {
    return super.hashCode();
  }

  /** The located form, for {@code listLocatedStatus} and {@code listFiles}, with the same etag. */
  static final class Located extends LocatedFileStatus implements EtagSource {
    private static final long serialVersionUID = 1L;
    private final String etag;

    Located(StrataFileStatus status, BlockLocation[] locations) {
      super(status, locations);
      this.etag = status.getEtag();
    }

    @Override
    public String getEtag() {
      return etag;
    }

    @Override
    public boolean equals(Object o) {
      return super.equals(o);
    }

    @Override
    public int hashCode() {
      return super.hashCode();
    }
  }
}
