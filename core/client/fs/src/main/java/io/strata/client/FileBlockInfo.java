package io.strata.client;

import java.util.List;

/** One block of a file: id, offset in the file, length, and where it is cached. Immutable. */
public record FileBlockInfo(long blockId, long offset, long length, List<BlockLocation> locations)
    implements java.io.Serializable {
  public FileBlockInfo {
    locations = List.copyOf(locations);
  }
}
