package io.strata.cli;

import com.google.protobuf.Descriptors;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.proto.FileInfoProto;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.GetClusterConfigurationRequest;
import io.strata.proto.GetClusterConfigurationResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetStatusResponse;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The training run that makes the CLI's class-data archive at package time ({@code strata_make_cli_archive}
 * in bin/strata-env.sh runs {@code StrataCli} with {@code -Dstrata.cli.training=true} and
 * {@code -XX:DumpLoadedClassList}, then dumps the archive from that list). Every class this run loads goes into
 * the archive, and a later {@code strata fs ls} maps those classes instead of reading, verifying and parsing
 * them from the jars.
 *
 * <p>The build has no cluster, so this run starts a stand-in master on a loopback ephemeral port that answers
 * the three calls {@code fs ls} makes (the cluster defaults, the status of {@code /} and its listing, with
 * made-up entries) and runs {@code fs ls -R /} against it through the real client: the HTTP/2 exchange and the
 * responses' classes are then in the archive, which a run against an address where nothing listens would not
 * load. It also builds every command's model ({@code --help}) and parses each master and worker message once.
 * The stand-in is no test double: nothing is asserted and its answers are not printed.
 *
 * <p>Runs once, on the main thread; its only contact outside the JVM is the loopback port.
 */
final class CdsTraining {
  static final String KEY = "strata.cli.training";

  private CdsTraining() {}

  /** The training; returns normally whatever the commands answered (their output goes nowhere). */
  static void run() throws IOException, InterruptedException {
    PrintStream none = new PrintStream(OutputStream.nullOutputStream());
    Server master = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(new StandInMaster()).build().start();
    try {
      StrataConf conf = StrataConf.of(Map.of(CommonKeys.MASTER_HOSTNAME.name(), "127.0.0.1",
          CommonKeys.MASTER_RPC_PORT.name(), String.valueOf(master.getPort())));
      StrataCli.run(conf, none, none, "fs", "ls", "/");
      StrataCli.run(conf, none, none, "fs", "ls", "-R", "/");
    } finally {
      master.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    StrataCli.run(StrataConf.defaults(), none, none, "--help");
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

  /** Answers {@code fs ls}'s calls: {@code /} is a directory holding a directory and a file. */
  private static final class StandInMaster extends FileSystemMasterServiceGrpc.FileSystemMasterServiceImplBase {
    @Override
    public void getClusterConfiguration(GetClusterConfigurationRequest request,
        StreamObserver<GetClusterConfigurationResponse> response) {
      response.onNext(GetClusterConfigurationResponse.newBuilder()
          .putClientDefaults(io.strata.client.ClientKeys.CONF_SYNC_INTERVAL.name(), "1min").setHash("training")
          .build());
      response.onCompleted();
    }

    @Override
    public void getStatus(GetStatusRequest request, StreamObserver<GetStatusResponse> response) {
      response.onNext(GetStatusResponse.newBuilder().setFile(entry(request.getPath(), true)).build());
      response.onCompleted();
    }

    @Override
    public void listStatus(ListStatusRequest request, StreamObserver<ListStatusResponse> response) {
      String dir = request.getPath().endsWith("/") ? request.getPath() : request.getPath() + "/";
      ListStatusResponse.Builder b = ListStatusResponse.newBuilder().addFiles(entry(dir + "file", false));
      if (dir.equals("/")) {
        b.addFiles(entry("/dir", true));
      }
      response.onNext(b.build());
      response.onCompleted();
    }

    private static FileInfoProto entry(String path, boolean directory) {
      String name = path.equals("/") ? "" : path.substring(path.lastIndexOf('/') + 1);
      return FileInfoProto.newBuilder().setId(path.hashCode() & 0xffffL).setPath(path).setName(name)
          .setDirectory(directory).setLength(directory ? 0 : 1234).setBlockSize(64L << 20).setComplete(true)
          .setCreationTimeMs(1_700_000_000_000L).setModificationTimeMs(1_700_000_000_000L).setOwner("strata")
          .setGroup("strata").setMode(directory ? 0755 : 0644).setChildCount(directory ? 1 : 0)
          .setPersistenceState("NOT_PERSISTED").setTtlMs(-1).setTtlAction("DELETE").build();
    }
  }
}
