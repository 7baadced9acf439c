package io.strata.tests;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.common.conf.StrataConf;
import java.io.File;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;

/**
 * A client in its own process for {@link ShortCircuitIntegrationTest}: reads one file from the local
 * cluster and prints one line {@code sha256=<hex> length=<n> opens=<n> hidden=<entries> fallbacks=<reasons>}
 * (opens: blocks read short-circuit; hidden: how many entries this process sees in the given dir).
 * Arguments: master port, file path, short-circuit mode, a dir to list.
 */
public final class ShortCircuitReadMain {
  private ShortCircuitReadMain() {}

  public static void main(String[] args) throws Exception {
    StrataConf conf = StrataConf.of(Map.of("strata.master.hostname", "localhost", "strata.master.rpc.port", args[0],
        "strata.user.shortcircuit.mode", args[2]));
    String[] entries = new File(args[3]).list();
    try (FileSystem fs = FileSystem.create(conf); FileInStream in = fs.openFile(args[1])) {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      byte[] buf = new byte[64 * 1024];
      long total = 0;
      for (int n; (n = in.read(buf, 0, buf.length)) > 0; ) {
        md.update(buf, 0, n);
        total += n;
      }
      System.out.println("sha256=" + HexFormat.of().formatHex(md.digest()) + " length=" + total + " opens="
          + in.shortCircuit().opens() + " hidden=" + (entries == null ? -1 : entries.length) + " fallbacks="
          + in.shortCircuit().fallbackReasons());
    }
  }
}
