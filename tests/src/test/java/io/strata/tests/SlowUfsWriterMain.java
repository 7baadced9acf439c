package io.strata.tests;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import java.util.Map;

/**
 * A CACHE_THROUGH writer in its own process for {@link SlowUfsWriterIntegrationTest}: creates the file, writes
 * 100 KiB (with 64 KiB chunks: one chunk sent to its block's worker and to the under file system stream), prints
 * {@code open} and then writes nothing more until it is killed (its client lives on: the test freezes or kills
 * it). Arguments: master port, file path, the client's {@code strata.user.ufs.write.keepalive.interval}.
 */
public final class SlowUfsWriterMain {
  private SlowUfsWriterMain() {}

  public static void main(String[] args) throws Exception {
    StrataConf conf = StrataConf.of(Map.of("strata.master.hostname", "localhost", "strata.master.rpc.port", args[0],
        "strata.user.shortcircuit.mode", "off", "strata.user.stream.chunk.size", "64KB",
        "strata.user.ufs.write.keepalive.interval", args[2]));
    FileSystem fs = FileSystem.create(conf);
    FileOutStream out = fs.createFile(args[1], CreateFileOptions.defaults().withBlockSize(1 << 20).withRecursive(true)
        .withWriteType(WriteType.CACHE_THROUGH));
    out.write(new byte[100 << 10]);
    System.out.println("open");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
