package io.strata.hadoop;

import io.strata.client.BlockLocation;
import io.strata.client.FileBlockInfo;
import java.util.ArrayList;
import java.util.List;

/**
 * Strata's block list as Hadoop's {@link org.apache.hadoop.fs.BlockLocation}s, which Spark and MapReduce
 * schedule by: each block overlapping [start, start + len) (len 0: the block holding start) names the
 * workers that cache it: hosts are their host names, names their {@code host:rpcPort}, topology paths
 * {@code /default-rack/host:rpcPort}, and the hosts holding it in the MEM tier are also its cached hosts. A
 * block no worker holds (a persisted file not cached) has no hosts: any node may read it, through a worker,
 * from the under file system. Stateless.
 */
final class BlockLocations {
  private BlockLocations() {}

  static org.apache.hadoop.fs.BlockLocation[] overlapping(List<FileBlockInfo> blocks, long start, long len) {
    long end = len == 0 ? start + 1 : start + len;
    List<org.apache.hadoop.fs.BlockLocation> out = new ArrayList<>();
    for (FileBlockInfo b : blocks) {
      if (b.offset() + b.length() <= start || b.offset() >= end) {
        continue;
      }
      List<String> names = new ArrayList<>();
      List<String> hosts = new ArrayList<>();
      List<String> cached = new ArrayList<>();
      List<String> topology = new ArrayList<>();
      for (BlockLocation l : b.locations()) {
        String name = l.address().host() + ":" + l.address().rpcPort();
        names.add(name);
        hosts.add(l.address().host());
        topology.add("/default-rack/" + name);
        if ("MEM".equalsIgnoreCase(l.tier())) {
          cached.add(l.address().host());
        }
      }
      out.add(new org.apache.hadoop.fs.BlockLocation(names.toArray(new String[0]), hosts.toArray(new String[0]),
          cached.toArray(new String[0]), topology.toArray(new String[0]), b.offset(), b.length(), false));
    }
    return out.toArray(new org.apache.hadoop.fs.BlockLocation[0]);
  }
}
