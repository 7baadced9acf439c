package io.strata.cli;

import com.google.protobuf.Descriptors;
import io.strata.common.conf.StrataConf;
import java.io.OutputStream;
import java.io.PrintStream;

/**
 * The extra work of the run that makes the CLI's class-data archive at package time ({@code
 * strata_make_cli_archive} in bin/strata-env.sh, with {@code -Dstrata.cli.training=true}). That run has no
 * master to talk to, so it also loads what a successful command loads: every {@code fs} command's model
 * (help builds them all) and the message classes of every master and worker RPC, parsed once. The JVM then
 * archives those classes too, and a later {@code strata fs ls} maps them instead of reading them from the
 * jars. Runs once, on the main thread, and touches nothing outside this JVM.
 */
final class CdsTraining {
  static final String KEY = "strata.cli.training";

  private CdsTraining() {}

  static void run() {
    PrintStream none = new PrintStream(OutputStream.nullOutputStream());
    StrataCli.run(StrataConf.defaults(), none, none, "fs", "--help");
    for (Descriptors.FileDescriptor file : new Descriptors.FileDescriptor[] {io.strata.proto.StrataMaster.getDescriptor(),
        io.strata.proto.StrataWorker.getDescriptor(), io.strata.proto.StrataCommon.getDescriptor()}) {
      for (Descriptors.ServiceDescriptor service : file.getServices()) {
        for (Descriptors.MethodDescriptor method : service.getMethods()) {
          load(method.getInputType());
          load(method.getOutputType());
        }
      }
    }
  }

  private static void load(Descriptors.Descriptor type) {
    try {
      Class<?> c = Class.forName("io.strata.proto." + type.getName());
      c.getMethod("parseFrom", byte[].class).invoke(null, (Object) new byte[0]);
    } catch (ReflectiveOperationException | LinkageError e) {
      // A message outside io.strata.proto (a well-known type) or not generated here: nothing to warm.
    }
  }
}
