package io.strata.shuffle;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Partition locations packed into bytes: each host and directory once, then per location its numbers and file
 * name. A {@link StrataShuffleHandle} carries a shuffle's first epochs so, because Spark deserializes the handle
 * with every task of the shuffle's stages: a reduce task, which needs none of them, then copies a byte array instead
 * of building a thousand objects with their strings, and a map task unpacks them. Stateless.
 */
final class PackedLocations {
  private PackedLocations() {}

  static byte[] pack(PartitionLocation[] locations) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(32 + locations.length * 40);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      Map<String, Integer> names = new HashMap<>();
      List<String> table = new ArrayList<>();
      int[][] refs = new int[locations.length][3];
      for (int i = 0; i < locations.length; i++) {
        PartitionLocation l = locations[i];
        refs[i][0] = names.computeIfAbsent(dirOf(l.path()), k -> add(table, k));
        refs[i][1] = names.computeIfAbsent(l.primaryHost(), k -> add(table, k));
        refs[i][2] = names.computeIfAbsent(l.replicaHost(), k -> add(table, k));
      }
      out.writeInt(table.size());
      for (String s : table) {
        out.writeUTF(s);
      }
      out.writeInt(locations.length);
      for (int i = 0; i < locations.length; i++) {
        PartitionLocation l = locations[i];
        out.writeInt(l.partitionId());
        out.writeInt(l.epoch());
        out.writeLong(l.fileId());
        out.writeInt(refs[i][0]);
        out.writeUTF(l.path().substring(dirOf(l.path()).length()));
        out.writeLong(l.blockSize());
        out.writeInt(refs[i][1]);
        out.writeInt(l.primaryPort());
        out.writeInt(refs[i][2]);
        out.writeInt(l.replicaPort());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array does not fail
    }
    return bytes.toByteArray();
  }

  static PartitionLocation[] unpack(byte[] packed) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(packed))) {
      String[] table = new String[in.readInt()];
      for (int i = 0; i < table.length; i++) {
        table[i] = in.readUTF();
      }
      PartitionLocation[] out = new PartitionLocation[in.readInt()];
      for (int i = 0; i < out.length; i++) {
        int partition = in.readInt();
        int epoch = in.readInt();
        long fileId = in.readLong();
        String path = table[in.readInt()] + in.readUTF();
        long blockSize = in.readLong();
        String primaryHost = table[in.readInt()];
        int primaryPort = in.readInt();
        String replicaHost = table[in.readInt()];
        out[i] = new PartitionLocation(partition, epoch, fileId, path, blockSize, primaryHost, primaryPort,
            replicaHost, in.readInt());
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("Damaged partition locations in a shuffle handle", e);
    }
  }

  /** The path up to and with its last '/' (all of it when it has none). */
  private static String dirOf(String path) {
    return path.substring(0, path.lastIndexOf('/') + 1);
  }

  private static int add(List<String> table, String s) {
    table.add(s);
    return table.size() - 1;
  }
}
