package io.strata.shuffle;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * A shuffle the Strata shuffle manager runs: Spark's dependency, the application id that names its
 * directory, the number of map tasks, and epoch 0 of every partition's location (later epochs come from
 * the driver by revive). Serialized to executors with every task of its stages, so the locations travel packed
 * ({@link PackedLocations}) and are unpacked only by the tasks that use them (map tasks). Immutable.
 */
public final class StrataShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
  private static final long serialVersionUID = 2L;
  private final String appId;
  private final int numMaps;
  private final byte[] packedLocations;
  private transient volatile PartitionLocation[] locations;

  StrataShuffleHandle(int shuffleId, ShuffleDependency<K, V, C> dependency, String appId, int numMaps,
      PartitionLocation[] locations) {
    super(shuffleId, dependency);
    this.appId = appId;
    this.numMaps = numMaps;
    this.packedLocations = PackedLocations.pack(locations);
    this.locations = locations;
  }

  public String appId() {
    return appId;
  }

  public int numMaps() {
    return numMaps;
  }

  /** Epoch 0 of every partition (callers do not change the array). */
  PartitionLocation[] locations() {
    PartitionLocation[] l = locations;
    if (l == null) {
      l = PackedLocations.unpack(packedLocations); // a race unpacks twice, alike
      locations = l;
    }
    return l;
  }
}
