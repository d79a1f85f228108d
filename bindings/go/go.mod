module sightline.dev/sightline

go 1.19
