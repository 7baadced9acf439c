package io.strata.master.block;

import java.util.List;

/** An immutable snapshot of one block: its length and the live workers that hold it. */
public record BlockState(long blockId, long length, List<Location> locations) {
  /** A worker holding the block and the tier it is in. */
  public record Location(WorkerState worker, String tier) {}

  public BlockState {
    locations = List.copyOf(locations);
  }
}
