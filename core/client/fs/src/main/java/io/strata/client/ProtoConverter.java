package io.strata.client;

import io.strata.client.options.MountOptions;
import io.strata.common.net.TieredIdentity;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockLocationProto;
import io.strata.proto.FileBlockInfoProto;
import io.strata.proto.FileInfoProto;
import io.strata.proto.GetClusterInfoResponse;
import io.strata.proto.MountInfoProto;
import io.strata.proto.WorkerAddressProto;
import io.strata.proto.WorkerInfoProto;
import java.util.ArrayList;
import java.util.List;

/** The client's one meeting point of protos and domain types. Stateless. */
final class ProtoConverter {
  private ProtoConverter() {}

  static URIStatus toStatus(FileInfoProto p) {
    List<FileBlockInfo> blocks = new ArrayList<>(p.getBlocksCount());
    for (FileBlockInfoProto b : p.getBlocksList()) {
      List<BlockLocation> locs = new ArrayList<>(b.getBlock().getLocationsCount());
      for (BlockLocationProto l : b.getBlock().getLocationsList()) {
        locs.add(new BlockLocation(l.getWorkerId(), toAddress(l.getAddress()), l.getTier()));
      }
      blocks.add(new FileBlockInfo(b.getBlock().getBlockId(), b.getOffset(), b.getBlock().getLength(), locs));
    }
    return new URIStatus(p.getId(), p.getPath(), p.getName(), p.getDirectory(), p.getLength(),
        p.getBlockSize(), p.getComplete(), p.getCreationTimeMs(), p.getModificationTimeMs(), p.getOwner(),
        p.getGroup(), p.getMode(), p.getChildCount(), blocks, p.getPersistenceState(), p.getPinned(), p.getTtlMs(),
        p.getTtlAction(), p.getUfsPath(), p.getMountPoint(), p.getAccessTimeMs());
  }

  static MountInfo toMount(MountInfoProto p) {
    return new MountInfo(p.getPath(), p.getUfsUri(), p.getReadOnly(), p.getShared(), p.getOptionsMap());
  }

  static MountInfoProto toMountProto(String path, String ufsUri, MountOptions options) {
    return MountInfoProto.newBuilder().setPath(path).setUfsUri(ufsUri).setReadOnly(options.readOnly())
        .setShared(options.shared()).putAllOptions(options.properties()).build();
  }

  static WorkerAddress toAddress(WorkerAddressProto p) {
    return new WorkerAddress(p.getHost(), p.getRpcPort(), new TieredIdentity(p.getNode(), p.getRack()),
        p.getTransferPort(), p.getWebPort());
  }

  static WorkerInfo toWorker(WorkerInfoProto p) {
    List<StorageDirInfo> dirs = new ArrayList<>(p.getDirsCount());
    for (io.strata.proto.StorageDirProto d : p.getDirsList()) {
      dirs.add(new StorageDirInfo(d.getTier(), d.getTierOrdinal(), d.getPath(), d.getGood(), d.getCapacityBytes(),
          d.getUsedBytes(), d.getLostBlocks()));
    }
    return new WorkerInfo(p.getId(), toAddress(p.getAddress()), p.getCapacityBytes(), p.getUsedBytes(),
        p.getLastHeartbeatMs(), p.getBlockCount(), p.getStartTimeMs(), dirs);
  }

  static ClusterInfo toClusterInfo(GetClusterInfoResponse p) {
    List<WorkerInfo> lost = new ArrayList<>();
    for (WorkerInfoProto w : p.getLostList()) {
      lost.add(toWorker(w));
    }
    return new ClusterInfo(p.getMasterAddress(), p.getStartTimeMs(), p.getLiveWorkers(), p.getLostWorkers(),
        p.getCapacityBytes(), p.getUsedBytes(), p.getFileCount(), p.getDirectoryCount(), p.getBlockCount(),
        lost, p.getMasterWebPort());
  }
}
