package io.strata.client;

import java.util.List;

/**
 * What the master says of a file or directory. Immutable.
 *
 * @param blocks the file's blocks with their locations, only when asked for (openFile); otherwise empty
 */
public record URIStatus(long id, String path, String name, boolean directory, long length, long blockSize,
    boolean complete, long creationTimeMs, long modificationTimeMs, String owner, String group, int mode,
    int childCount, List<FileBlockInfo> blocks) {

  public URIStatus {
    blocks = List.copyOf(blocks);
  }

  public boolean isFile() {
    return !directory;
  }
}
