package io.strata.tests;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import java.io.File;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;

/**
 * A client in its own process for {@link ShortCircuitWriteIntegrationTest}: writes one file of
 * 1 MiB blocks (bytes from {@code new Random(seed)}) to the local cluster and prints one line
 * {@code sha256=<hex> length=<n> writes=<n> hidden=<entries> fallbacks=<reasons>} (writes: blocks written
 * short-circuit; hidden: how many entries this process sees in the given dir). Arguments: master port,
 * file path, short-circuit mode, a dir to list, length, seed, write type, and optionally {@code die}: print
 * {@code writes=<n>} and halt without closing the file, in the middle of its last block; after {@code die},
 * {@code sync} commits each block before the next starts (no commit in the background, so every finished block
 * is committed before the halt, and no block is created ahead).
 */
public final class ShortCircuitWriteMain {
  private ShortCircuitWriteMain() {}

  public static void main(String[] args) throws Exception {
    StrataConf conf = StrataConf.of(Map.of("strata.master.hostname", "localhost", "strata.master.rpc.port", args[0],
        "strata.user.shortcircuit.mode", args[2], "strata.user.shortcircuit.write.commit.background",
        String.valueOf(!(args.length > 8 && args[8].equals("sync")))));
    String[] entries = new File(args[3]).list();
    byte[] data = new byte[Integer.parseInt(args[4])];
    new Random(Long.parseLong(args[5])).nextBytes(data);
    try (FileSystem fs = FileSystem.create(conf)) {
      FileOutStream out = fs.createFile(args[1], CreateFileOptions.defaults().withBlockSize(1 << 20)
          .withWriteType(WriteType.valueOf(args[6])));
      out.write(data);
      if (args.length > 7 && args[7].equals("die")) {
        // Killed mid-block: no commit, no abort, no close; the kernel ends the connection.
        System.out.println("writes=" + out.shortCircuit().writesCreated());
        System.out.flush();
        Runtime.getRuntime().halt(3);
      }
      out.close();
      System.out.println("sha256=" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data))
          + " length=" + out.bytesWritten() + " writes=" + out.shortCircuit().writesCreated() + " hidden="
          + (entries == null ? -1 : entries.length) + " fallbacks=" + out.shortCircuit().fallbackReasons());
    }
  }
}
